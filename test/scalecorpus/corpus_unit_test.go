package scalecorpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A corpus of N copies holds every document N times, split evenly between
// the public and the ops source; copy 0 is the original and later copies
// differ from it; the license notice and non-Markdown files stay out.
func TestCorpusWritesPerturbedCopiesSplitBetweenSources(t *testing.T) {
	src := t.TempDir()
	for name, content := range map[string]string{
		"a.md": sampleDoc, "guide/b.md": sampleDoc + "\nmore words here for the guide\n", "guide/c.md": "# C\n\nanother small page about waves\n",
		"d.md": "# D\n\nthe last page of this tiny corpus\n", "SOURCE.md": "license", "logo.png": "png",
	} {
		path := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	c := corpora(src, []int{3}, "")[0]
	n, err := c.write(out)
	if err != nil {
		t.Fatal(err)
	}
	if n != 12 {
		t.Fatalf("wrote %d documents, want 4 × 3", n)
	}
	count := map[string]int{}
	_ = filepath.WalkDir(out, func(path string, d os.DirEntry, _ error) error {
		if !d.IsDir() {
			rel, _ := filepath.Rel(out, path)
			count[strings.SplitN(rel, string(filepath.Separator), 2)[0]]++
		}
		return nil
	})
	if count[publicSource] != 6 || count[opsSource] != 6 || len(count) != 2 {
		t.Errorf("documents per source %v, want 6 public and 6 ops", count)
	}
	read := func(copyDir string) string {
		data, err := os.ReadFile(filepath.Join(out, publicSource, "argocd", copyDir, "a.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if read("copy-00") != sampleDoc || read("copy-01") == sampleDoc || read("copy-01") == read("copy-02") {
		t.Error("copy 0 is not the original, or later copies do not differ")
	}
}

// Every N keeps every N-th document in path order, split as ever.
func TestCorpusEveryNthDocument(t *testing.T) {
	src := t.TempDir()
	for _, name := range []string{"a.md", "b.md", "c.md", "d.md", "e.md"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte("# "+name+"\n\nsome words\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	n, err := corpus{Name: "sample", Parts: []part{{Name: "s", Dir: src, Copies: 1, Every: 2}}}.write(out)
	if err != nil || n != 3 {
		t.Fatalf("wrote %d documents (%v), want a, c and e", n, err)
	}
	for _, kept := range []string{filepath.Join(publicSource, "s", "copy-00", "a.md"), filepath.Join(opsSource, "s", "copy-00", "c.md"), filepath.Join(publicSource, "s", "copy-00", "e.md")} {
		if _, err := os.Stat(filepath.Join(out, kept)); err != nil {
			t.Error(err)
		}
	}
}

// Without the OpenTelemetry docs a run measures the Argo CD multiples
// only; with them, those and both corpora together.
func TestCorporaOfARun(t *testing.T) {
	if got := corpora("argo", []int{1, 2}, ""); len(got) != 2 || got[1].Multiple != 2 || got[1].Parts[0].Copies != 2 {
		t.Errorf("corpora %+v", got)
	}
	got := corpora("argo", []int{1}, "otel")
	if len(got) != 3 || got[1].Multiple != 0 || len(got[2].Parts) != 2 {
		t.Errorf("corpora %+v", got)
	}
}
