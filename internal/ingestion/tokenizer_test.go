package ingestion

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/sources"
)

// chunksPerPage chunks every page under dir with the default options in
// the tokens of t.
func chunksPerPage(t *testing.T, dir string, tokenizer podconfig.Tokenizer) map[string]int {
	t.Helper()
	read, err := sources.ReadMarkdown(dir, "", []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	opts := ingest.DefaultOptions()
	opts.Tokens = chunkTokens(tokenizer)
	counts := map[string]int{}
	for _, doc := range read.Documents {
		chunks, err := ingest.Chunks(doc, opts)
		if err != nil {
			t.Fatal(err)
		}
		counts[doc.Source] = len(chunks)
	}
	return counts
}

// A store that counts in its embedder's tokens cuts a Russian page into
// about as many chunks as its English original, under the same
// maxTokens; counted in BERT's English WordPiece, which cuts Cyrillic
// into letters, it made twice as many or more.
func TestRussianPagesChunkLikeTheirEnglishOriginals(t *testing.T) {
	pairs := filepath.Join("..", "..", "test", "eval", "pairs-k8s")
	ratio := func(tokenizer podconfig.Tokenizer) (float64, string) {
		ru, en := chunksPerPage(t, filepath.Join(pairs, "ru"), tokenizer), chunksPerPage(t, filepath.Join(pairs, "en"), tokenizer)
		var b strings.Builder
		totalRU, totalEN := 0, 0
		for _, page := range slices.Sorted(maps.Keys(en)) {
			totalRU, totalEN = totalRU+ru[page], totalEN+en[page]
			fmt.Fprintf(&b, "\n  %-60s %3d / %3d", page, ru[page], en[page])
		}
		if len(en) != 14 || len(ru) != 14 {
			t.Fatalf("%d English and %d Russian pages, want 14 pairs", len(en), len(ru))
		}
		return float64(totalRU) / float64(totalEN), fmt.Sprintf("%s: %d / %d chunks%s", tokenizer, totalRU, totalEN, b.String())
	}
	xlmr, table := ratio(podconfig.TokenizerXLMRoberta)
	t.Log(table)
	if xlmr > 1.5 {
		t.Errorf("in XLM-R's tokens, Russian pages make %.2f times their originals' chunks, want at most 1.5", xlmr)
	}
	bert, table := ratio(podconfig.TokenizerBERTUncased)
	t.Log(table)
	if bert < 1.5 {
		t.Errorf("in BERT's tokens, %.2f times: the pairs no longer show what the tokenizer changes", bert)
	}
}
