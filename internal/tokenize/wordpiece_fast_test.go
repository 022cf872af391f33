package tokenize

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oddInputs are texts where a fast path could part ways with BERT's basic
// tokenization.
var oddInputs = []string{
	"",
	" ",
	"\t\n\r\v\f",
	"Hello, world!",
	"ÀÉÎÕÜ àéîõü Ångström naïve façade coöperate",
	"e\u0301 a\u0300\u0316 \u0301leading combining mark",
	"\u00a0nbsp\u00a0inside\u2003em\u3000ideographic\u0085nel",
	"汉字和かなとカタカナ 한국어 mixed汉字with latin",
	"\U00020000\U0002A700 rare CJK extensions \uF900\U0002F800",
	"!!!???...,,,;;;:::---___===+++***&&&^^^%%%$$$###@@@",
	"“smart quotes” ‘single’ — en–dash … ellipsis «guillemets» ¿qué? ¡sí!",
	"emoji 🚀🔥👍🏽 flags 🇩🇪 zwj 👩‍💻",
	"zero\u200bwidth soft\u00adhyphen bom\ufeff rtl\u200f",
	"ctrl\x00\x01\x02\x1f\x7fchars in\x00side words",
	"invalid \xff\xfe utf-8 \xc3( and \xe2\x82 truncated",
	strings.Repeat("a", 100),
	strings.Repeat("a", 101),
	strings.Repeat("é", 100),
	strings.Repeat("é", 101),
	strings.Repeat("e\u0301", 101),
	strings.Repeat("A", 99) + "Ä",
	strings.Repeat("B", 101),
	strings.Repeat("a", 50) + "\x01" + strings.Repeat("a", 51),
	strings.Repeat("ab", 49) + "\x00xy",
	strings.Repeat("kubernetes", 10) + " " + strings.Repeat("kubernetes", 10) + "s",
	strings.Repeat("x", 150) + "." + strings.Repeat("y", 150),
	strings.Repeat("ab", 60) + "ü",
	"supercalifragilisticexpialidocious antidisestablishmentarianism",
	"https://argo-cd.readthedocs.io/en/stable/operator-manual/ingress/#kubernetesingress-nginx",
	"ΑΒΓ αβγ Ωmega İstanbul ǅ ß ﬁ ligature Ⅻ ① ½ ²",
	"kubectl get pods -n argocd\u00a0--watch",
	"\u0301\u0301\u0301",
	"K\u212a kelvin sign, \u0130 dotted I",
}

func TestFastCountEqualsReferenceOnOddInputs(t *testing.T) {
	fast, ref := NewBERTUncased(), newReferenceWordPiece()
	for _, text := range oddInputs {
		if got, want := fast.Count(text), ref.Count(text); got != want {
			t.Errorf("Count(%q) = %d, reference %d", text, got, want)
		}
	}
}

// TestTrieHoldsEveryPiece: each vocabulary piece is found whole under its
// root, and a piece cut short only where the vocabulary has the prefix.
// (Pieces with upper-case letters, such as [CLS], are left out: words are
// looked up lower-cased, so no word reaches them, in either counter.)
func TestTrieHoldsEveryPiece(t *testing.T) {
	w, ref := NewBERTUncased(), newReferenceWordPiece()
	for root, pieces := range []map[string]struct{}{ref.starts, ref.continues} {
		for piece := range pieces {
			if strings.ContainsFunc(piece, func(r rune) bool { return 'A' <= r && r <= 'Z' }) {
				continue
			}
			if got := longestPiece(w.vocab, uint32(root), piece); got != len(piece) {
				t.Errorf("root %d: longestPiece(%q) = %d", root, piece, got)
			}
			cut := piece[:len(piece)-1]
			if cut == "" {
				continue
			}
			_, known := pieces[cut]
			if got := longestPiece(w.vocab, uint32(root), cut); (got == len(cut)) != known {
				t.Errorf("root %d: longestPiece(%q) = %d, a piece: %v", root, cut, got, known)
			}
		}
	}
}

// TestFastCountEqualsReferenceOnCorpus compares every file of the eval
// corpus, whole and line by line.
func TestFastCountEqualsReferenceOnCorpus(t *testing.T) {
	fast, ref := NewBERTUncased(), newReferenceWordPiece()
	files := 0
	for _, text := range corpusFiles(t) {
		files++
		if got, want := fast.Count(text), ref.Count(text); got != want {
			t.Errorf("file %d: %d tokens, reference %d", files, got, want)
		}
		for _, line := range strings.Split(text, "\n") {
			if got, want := fast.Count(line), ref.Count(line); got != want {
				t.Errorf("Count(%q) = %d, reference %d", line, got, want)
			}
		}
	}
	if files != 190 {
		t.Errorf("%d corpus files, want 190", files)
	}
}

// TestFastCountEqualsReferenceOnRandomText compares texts glued from
// fragments that exercise every branch: cases, accents, combining marks,
// CJK, punctuation runs, control characters, odd whitespace, long words.
func TestFastCountEqualsReferenceOnRandomText(t *testing.T) {
	fast, ref := NewBERTUncased(), newReferenceWordPiece()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		text := randomText(rng)
		if got, want := fast.Count(text), ref.Count(text); got != want {
			t.Fatalf("Count(%q) = %d, reference %d", text, got, want)
		}
	}
}

// TestCountsAddUpAcrossWhitespace is the property callers rely on to count
// parts once and sum (SpaceAdditive): it holds for the reference
// tokenizer, so it is a property of WordPiece, not of the fast path.
func TestCountsAddUpAcrossWhitespace(t *testing.T) {
	fast, ref := NewBERTUncased(), newReferenceWordPiece()
	rng := rand.New(rand.NewPCG(3, 4))
	spaces := []string{" ", "\n", "\n\n", "\t", " \r\n ", "\v\f", "\u00a0", "\u0085", "\u1680", "\u2000", "\u2001", "\u2028", "\u3000", " \u2003\n"}
	check := func(a, ws, b string) {
		t.Helper()
		for name, c := range map[string]Counter{"fast": fast, "reference": ref} {
			if whole, sum := c.Count(a+ws+b), c.Count(a)+c.Count(b); whole != sum {
				t.Fatalf("%s: Count(%q) = %d, but the parts count %d", name, a+ws+b, whole, sum)
			}
		}
	}
	for range 20000 {
		check(randomText(rng), spaces[rng.IntN(len(spaces))], randomText(rng))
	}
	for _, text := range corpusFiles(t) {
		lines := strings.Split(text, "\n")
		sum := 0
		for _, line := range lines {
			sum += ref.Count(line)
		}
		if whole := ref.Count(text); whole != sum {
			t.Errorf("a corpus file counts %d, its lines %d", whole, sum)
		}
	}
}

// FuzzCountEqualsReference: go test ./internal/tokenize -run '^$' -fuzz FuzzCountEqualsReference
func FuzzCountEqualsReference(f *testing.F) {
	for _, text := range oddInputs {
		f.Add(text)
	}
	fast, ref := NewBERTUncased(), newReferenceWordPiece()
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := fast.Count(text), ref.Count(text); got != want {
			t.Errorf("Count(%q) = %d, reference %d", text, got, want)
		}
	})
}

var fragments = []string{
	"a", "Z", "ing", "##", "the", "Kubernetes", "argocd", "x509", "0", "42", "3.14",
	"é", "É", "e\u0301", "\u0301", "\u0316", "ß", "İ", "\u212a", "ǅ", "ﬁ",
	"汉", "字", "か", "カ", "한", "\U00020000",
	".", ",", "!", "?", "-", "_", "/", ":", "#", "`", "'", "\"", "(", ")", "…", "—", "“", "¿",
	" ", " ", "\n", "\t", "\r", "\u00a0", "\u3000", "\u0085", "\u2028",
	"\x00", "\x01", "\x7f", "\u200b", "\u00ad", "\ufeff", "\xff", "\xc3",
	"🚀", "👍🏽", "\u200d",
}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(40) {
		if rng.IntN(50) == 0 { // a word near BERT's 100-character limit
			b.WriteString(strings.Repeat(fragments[rng.IntN(len(fragments))], 95+rng.IntN(10)))
			continue
		}
		b.WriteString(fragments[rng.IntN(len(fragments))])
	}
	return b.String()
}

// corpusFiles returns the contents of the eval corpus's Markdown files.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	root := filepath.Join("..", "..", "test", "eval", "corpus", "argocd")
	var texts []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") || d.Name() == "SOURCE.md" {
			return err
		}
		data, err := os.ReadFile(path)
		texts = append(texts, string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return texts
}

func BenchmarkWordPieceReference(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "test", "eval", "corpus", "argocd", "faq.md"))
	if err != nil {
		b.Fatal(err)
	}
	w := newReferenceWordPiece()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		w.Count(string(data))
	}
}
