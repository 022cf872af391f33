package ingestion

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// recordingEmbedder keeps every text it is asked to embed.
type recordingEmbedder struct{ inputs []string }

func (r *recordingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r.inputs = append(r.inputs, texts...)
	return make([][]float32, len(texts)), nil
}

// Chunks within chunking.maxTokens still overflow the embedder once their
// title path and the document prefix go in front: every string sent to
// the embedder (prefix, title path and text, special tokens) fits the
// limit less its margin, the rows so cut are counted, and their stored
// text stays whole.
func TestRowsKeepTheEmbeddersInputLimit(t *testing.T) {
	dir := t.TempDir()
	body := strings.Repeat("The chunker splits a long section into parts that each fit its threshold. ", 12)
	doc := "# Configuring the ingestion pipeline of the organisation's knowledge store\n\n" +
		"## Chunking thresholds, overlapping parts and the embedder's input limit explained at length\n\n" + body +
		"\n## Short\n\nA few words.\n"
	if err := os.WriteFile(filepath.Join(dir, "ingestion.md"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	const maxInput = 64
	embedding := podconfig.Embedding{MaxInputTokens: maxInput, DocumentPrefix: "passage: "}
	cfg := podconfig.IngestConfig{
		Embedding: embedding,
		Chunking:  podconfig.Chunking{MaxTokens: 48, OverlapTokens: 8},
		Sources:   []podconfig.Source{{Name: "docs", Path: dir, Principals: []string{"public"}}},
	}
	limit, err := newInputLimit(embedding)
	if err != nil {
		t.Fatal(err)
	}
	var summary Summary
	rows, err := readRows(context.Background(), cfg, limit, &summary)
	if err != nil {
		t.Fatal(err)
	}

	// What the embedder sees, composed as `ragroute ingest` composes it:
	// the run's limit, then the client's document prefix.
	recorder := &recordingEmbedder{}
	embedder := limit.embedder(model.WithPrefix(recorder, embedding.DocumentPrefix, maxInput, tokenize.NewInputCounter()))
	counter := tokenize.NewInputCounter()
	usable := maxInput * (100 - tokenize.InputMarginPercent) / 100
	over := 0
	for _, r := range rows {
		texts := []string{r.EmbeddedText(), r.TitlePath()}
		if counter.Count(embedding.DocumentPrefix+texts[0])+tokenize.SpecialTokens > usable ||
			counter.Count(embedding.DocumentPrefix+texts[1])+tokenize.SpecialTokens > usable {
			over++
		}
		if _, err := embedder.Embed(context.Background(), texts); err != nil {
			t.Fatal(err)
		}
	}
	for _, input := range recorder.inputs {
		if !strings.HasPrefix(input, embedding.DocumentPrefix) {
			t.Errorf("the prefix was lost: %q", input)
		}
		if n := counter.Count(input) + tokenize.SpecialTokens; n > usable {
			t.Errorf("an input of %d tokens reached the embedder, over %d (%d less the margin): %q", n, usable, maxInput, input)
		}
	}
	if over == 0 || over == len(rows) {
		t.Fatalf("%d of %d rows over the limit: the test document should put some over, not all", over, len(rows))
	}
	if summary.Truncated != over {
		t.Errorf("counted %d truncated rows, %d were over the limit", summary.Truncated, over)
	}
	for _, r := range rows {
		if counter.Count(r.Text) > cfg.Chunking.MaxTokens {
			t.Errorf("a stored text is over chunking.maxTokens: %q", r.Text)
		}
	}
	if joined := rowsText(rows); !strings.Contains(joined, "fit its threshold.") || !strings.Contains(joined, "A few words.") {
		t.Errorf("the stored texts lost their ends:\n%s", joined)
	}
}

func rowsText(rows []knowledge.Row) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.Text + "\n")
	}
	return b.String()
}

// A document prefix that leaves no room in the embedder's input fails the
// run before anything is read, naming both fields.
func TestInputLimitRefusesAPrefixThatLeavesNoRoom(t *testing.T) {
	_, err := newInputLimit(podconfig.Embedding{MaxInputTokens: 16, DocumentPrefix: strings.Repeat("passage ", 14)})
	if err == nil || !strings.Contains(err.Error(), "embedding.documentPrefix") || !strings.Contains(err.Error(), "embedding.maxInputTokens 16") {
		t.Fatalf("err %v, want one naming documentPrefix and maxInputTokens", err)
	}
}
