package sources

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// write creates a file under dir, with its folders.
func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A mounted ConfigMap is links into its ..data folder: they are followed,
// and the hidden folder itself is not read twice.
func TestReadMarkdownFollowsLinksInsideTheSource(t *testing.T) {
	root := t.TempDir()
	write(t, root, "..2026_12_01/faq.md", "# FAQ\n\nAsk.\n")
	if err := os.Symlink("..2026_12_01", filepath.Join(root, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/faq.md", filepath.Join(root, "faq.md")); err != nil {
		t.Fatal(err)
	}
	docs, err := ReadMarkdown(root, nil)
	if err != nil || len(docs) != 1 || docs[0].Source != "faq.md" || !strings.Contains(docs[0].Content, "Ask.") {
		t.Fatalf("documents %+v, %v", docs, err)
	}
}

// Nothing outside the source is read: a link out of it (to a secret, to
// /proc/self/environ, to /dev/zero), a FIFO that would hang the run, and a
// file over the size limit each fail the read, naming the entry; no
// document holds what lies outside.
func TestReadMarkdownReadsOnlyRegularFilesInsideTheSource(t *testing.T) {
	outside := write(t, t.TempDir(), "secret.txt", "CANARY token")
	cases := map[string]struct {
		make func(root string)
		want string
	}{
		"link to a file outside": {func(root string) {
			_ = os.Symlink(outside, filepath.Join(root, "docs", "env.md"))
		}, "docs/env.md links to"},
		"relative link climbing out": {func(root string) {
			rel, _ := filepath.Rel(filepath.Join(root, "docs"), outside)
			_ = os.Symlink(rel, filepath.Join(root, "docs", "env.md"))
		}, "outside the source"},
		"link to the process environment": {func(root string) {
			_ = os.Symlink("/proc/self/environ", filepath.Join(root, "docs", "env.md"))
		}, "outside the source"},
		"link to /dev/zero": {func(root string) {
			_ = os.Symlink("/dev/zero", filepath.Join(root, "docs", "zero.md"))
		}, "outside the source"},
		"a FIFO": {func(root string) {
			_ = syscall.Mkfifo(filepath.Join(root, "docs", "pipe.md"), 0o644)
		}, "docs/pipe.md is not a regular file"},
		"a file over the limit": {func(root string) {
			write(t, root, "docs/huge.md", strings.Repeat("x", maxDocumentBytes+1))
		}, "docs/huge.md is over"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "docs/intro.md", "# Intro\n")
			tc.make(root)
			done := make(chan struct{})
			var err error
			go func() {
				defer close(done)
				var docs []string
				var read []byte
				d, e := ReadMarkdown(root, nil)
				err = e
				for _, doc := range d {
					docs = append(docs, doc.Source)
					read = append(read, doc.Content...)
				}
				if strings.Contains(string(read), "CANARY") {
					t.Errorf("a document holds the secret outside the source: %v", docs)
				}
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the read hangs")
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadMarkdown() = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
