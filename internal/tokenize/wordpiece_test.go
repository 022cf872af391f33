package tokenize

import (
	"os"
	"path/filepath"
	"testing"
)

// The expected counts come from Hugging Face's BertWordPieceTokenizer
// (tokenizers 0.22, lowercase, no special tokens) over the same vocabulary.
func TestWordPieceMatchesReferenceTokenizer(t *testing.T) {
	w := NewBERTUncased()
	cases := []struct {
		text string
		want int
	}{
		{"Hello, world!", 4},
		{"Argo CD's `argocd-repo-server` can't reach the Git repo: x509: certificate signed by unknown authority", 34},
		{"Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u2014 d\u00e9j\u00e0 vu", 7},
		{"kubectl -n argocd patch secret argocd-secret -p '{\"stringData\": {\"admin.password\": \"$2a$10$rRyBs\"}}'", 47},
		{"| Name | Value |\n|------|-------|\n| `timeout.reconciliation` | 180s |", 32},
		{"\u6c49\u5b57 and \u304b\u306a mixed with English", 8},
		{"supercalifragilisticexpialidocious antidisestablishmentarianism", 19},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1},
		{"zero\u200bwidth soft\u00adhyphen tab\tnewline\n", 11},
		{"https://argo-cd.readthedocs.io/en/stable/operator-manual/ingress/#kubernetesingress-nginx", 38},
	}
	for _, tc := range cases {
		if got := w.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestWordPieceOnCorpusFiles(t *testing.T) {
	w := NewBERTUncased()
	cases := []struct {
		file string
		want int
	}{
		{"getting_started.md", 3134},
		{"operator-manual/applicationset/Application-Deletion.md", 583},
		{"operator-manual/applicationset/Generators-Cluster-Decision-Resource.md", 1176},
		{"operator-manual/applicationset/Generators-List.md", 1101},
		{"operator-manual/applicationset/Generators-Post-Selector.md", 755},
		{"operator-manual/applicationset/Getting-Started.md", 1447},
		{"operator-manual/applicationset/Template.md", 2076},
		{"operator-manual/architecture.md", 300},
		{"operator-manual/core.md", 958},
	}
	for _, tc := range cases {
		data, err := os.ReadFile(filepath.Join("..", "..", "test", "eval", "corpus", "argocd", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Count(string(data)); got != tc.want {
			t.Errorf("%s: %d tokens, want %d", tc.file, got, tc.want)
		}
	}
}

func BenchmarkWordPiece(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "test", "eval", "corpus", "argocd", "faq.md"))
	if err != nil {
		b.Fatal(err)
	}
	w := NewBERTUncased()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		w.Count(string(data))
	}
}

func TestCL100KCounts(t *testing.T) {
	b, err := NewCL100K()
	if err != nil {
		t.Fatal(err)
	}
	// "hello world" is two cl100k tokens; the empty string none.
	if b.Count("hello world") != 2 || b.Count("") != 0 {
		t.Errorf("cl100k counts %d, %d", b.Count("hello world"), b.Count(""))
	}
}

// A word of English prose is one piece; a coined word is split.
func TestIsWordTellsVocabularyWordsFromCoinedOnes(t *testing.T) {
	w := NewBERTUncased()
	for word, want := range map[string]bool{"ready": true, "made": true, "in": true, "qualified": true, "argocd": false, "kube": false, "repo": false, "": false} {
		if got := w.IsWord(word); got != want {
			t.Errorf("IsWord(%q) = %v, want %v", word, got, want)
		}
	}
}
