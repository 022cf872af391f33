package sources

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
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
	read, err := ReadMarkdown(root, "", nil)
	docs := read.Documents
	if err != nil || len(read.Refused) > 0 || len(docs) != 1 || docs[0].Source != "faq.md" || !strings.Contains(docs[0].Content, "Ask.") {
		t.Fatalf("documents %+v, %v", read, err)
	}
}

// Nothing outside the source is read: a link out of it (to a secret, to
// /proc/self/environ, to /dev/zero) or to nothing, a FIFO that would hang
// the run, and a file over the size limit are each refused, named, and
// the source's other documents are still read; no document holds what
// lies outside.
func TestReadMarkdownReadsOnlyRegularFilesInsideTheSource(t *testing.T) {
	outside := write(t, t.TempDir(), "secret.txt", "CANARY token")
	cases := map[string]struct {
		make func(t *testing.T, root string)
		want string
	}{
		"link to a file outside": {func(t *testing.T, root string) {
			_ = os.Symlink(outside, filepath.Join(root, "docs", "env.md"))
		}, "docs/env.md links to"},
		"relative link climbing out": {func(t *testing.T, root string) {
			rel, _ := filepath.Rel(filepath.Join(root, "docs"), outside)
			_ = os.Symlink(rel, filepath.Join(root, "docs", "env.md"))
		}, "outside the source"},
		"link to the process environment": {func(t *testing.T, root string) {
			_ = os.Symlink("/proc/self/environ", filepath.Join(root, "docs", "env.md"))
		}, "outside the source"},
		"link to /dev/zero": {func(t *testing.T, root string) {
			_ = os.Symlink("/dev/zero", filepath.Join(root, "docs", "zero.md"))
		}, "outside the source"},
		"a link to nothing": {func(t *testing.T, root string) {
			_ = os.Symlink("gone.md", filepath.Join(root, "docs", "dangling.md"))
		}, "docs/dangling.md: a link to gone.md, which leads nowhere: refused"},
		"a FIFO": {func(t *testing.T, root string) {
			_ = syscall.Mkfifo(filepath.Join(root, "docs", "pipe.md"), 0o644)
		}, "docs/pipe.md is not a regular file"},
		"a file over the limit": {func(t *testing.T, root string) {
			write(t, root, "docs/huge.md", strings.Repeat("x", ingest.MaxDocumentBytes+1))
		}, "docs/huge.md is over"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "docs/intro.md", "# Intro\n")
			tc.make(t, root)
			done := make(chan struct{})
			var read Read
			var err error
			go func() {
				defer close(done)
				read, err = ReadMarkdown(root, "", nil)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the read hangs")
			}
			if err != nil {
				t.Fatalf("ReadMarkdown() = %v; want the entry refused and the others read", err)
			}
			var docs []string
			for _, doc := range read.Documents {
				docs = append(docs, doc.Source)
				if strings.Contains(doc.Content, "CANARY") {
					t.Errorf("document %s holds the secret outside the source", doc.Source)
				}
			}
			if strings.Join(docs, ",") != "docs/intro.md" {
				t.Errorf("documents %v, want docs/intro.md alone", docs)
			}
			if len(read.Refused) != 1 || !strings.Contains(read.Refused[0].Error(), tc.want) {
				t.Errorf("refused %v, want one saying %q", read.Refused, tc.want)
			}
		})
	}
}

// A source's path (a PVC source's path, or a folder above it) that is a
// symbolic link would make wherever it leads the source: another
// source's mount (salaries.md, read with this source's principals), the
// scratch folder of earlier clones, or /. The read fails, naming the
// path and the problem, and returns no document; a source's path that is
// a real folder still reads.
func TestReadMarkdownRefusesALinkAtOrAboveTheSourcesPath(t *testing.T) {
	sources := t.TempDir() // as the Job sees /sources: one mount per source
	write(t, sources, "finance/salaries.md", "# Salaries\n\nCANARY: the CEO earns a lot.\n")
	cases := map[string]struct {
		path string
		make func(t *testing.T, mount string)
		want string
	}{
		"the path is a link to another source's mount": {"docs", func(t *testing.T, mount string) {
			_ = os.Symlink(filepath.Join(sources, "finance"), filepath.Join(mount, "docs"))
		}, "docs is a symbolic link, the source's path: refused"},
		"the path is a relative link climbing out": {"docs", func(t *testing.T, mount string) {
			_ = os.Symlink("../finance", filepath.Join(mount, "docs"))
		}, "docs is a symbolic link, the source's path: refused"},
		"the path is a link to /": {"docs", func(t *testing.T, mount string) {
			_ = os.Symlink("/", filepath.Join(mount, "docs"))
		}, "docs is a symbolic link"},
		"a folder above the path is a link": {"team/docs", func(t *testing.T, mount string) {
			_ = os.MkdirAll(filepath.Join(sources, "finance", "docs"), 0o755)
			write(t, sources, "finance/docs/pay.md", "# Pay\n\nCANARY\n")
			_ = os.Symlink(filepath.Join(sources, "finance"), filepath.Join(mount, "team"))
		}, "team is a symbolic link, a folder above the source's path team/docs: refused"},
		"a link inside the mount to a folder beside the path": {"docs", func(t *testing.T, mount string) {
			write(t, mount, "private/pay.md", "# Pay\n\nCANARY\n")
			_ = os.Symlink("private", filepath.Join(mount, "docs"))
		}, "docs is a symbolic link"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mount := filepath.Join(t.TempDir(), "wiki")
			if err := os.MkdirAll(mount, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.make(t, mount)
			read, err := ReadMarkdown(mount, tc.path, []string{"public"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("ReadMarkdown() = %v, want an error saying %q", err, tc.want)
			}
			if len(read.Documents) > 0 {
				t.Errorf("documents read through the link: %+v", read.Documents)
			}
		})
	}
	mount := t.TempDir()
	write(t, mount, "team/docs/intro.md", "# Intro\n")
	read, err := ReadMarkdown(mount, "/team/docs/", nil)
	if err != nil || len(read.Documents) != 1 || read.Documents[0].Source != "intro.md" {
		t.Errorf("a real folder as the path: %+v, %v", read, err)
	}
	if _, err := ReadMarkdown(mount, "team/../../x", nil); err == nil || !strings.Contains(err.Error(), "leaves its volume or repository") {
		t.Errorf("a path climbing out: %v", err)
	}
}

// A source's documents come one at a time in the order of their paths
// (docs.md before docs/a.md, as the paths sort, though a folder listing
// puts docs before docs.md), and a walk its visitor stops reads no
// further.
func TestWalkReadsDocumentsInPathOrderAndStops(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"docs/b.md", "docs/a.md", "docs.md", "docs-old.md", "a.md", "notes.txt"} {
		write(t, root, name, "# "+name+"\n")
	}
	source, err := OpenMarkdown(root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer source.Close()
	var order []string
	err = source.Walk(func(doc ingest.Document) error {
		order = append(order, doc.Source)
		return nil
	}, func(err error) { t.Error(err) })
	want := []string{"a.md", "docs-old.md", "docs.md", "docs/a.md", "docs/b.md"}
	if err != nil || !slices.Equal(order, want) || !slices.IsSorted(order) {
		t.Fatalf("walked %q (%v), want %q", order, err, want)
	}
	stop := errors.New("enough")
	order = nil
	err = source.Walk(func(doc ingest.Document) error {
		order = append(order, doc.Source)
		if len(order) == 2 {
			return stop
		}
		return nil
	}, func(err error) { t.Error(err) })
	if !errors.Is(err, stop) || len(order) != 2 {
		t.Errorf("a walk stopped at the second document read %q and returned %v, want two and the visitor's error", order, err)
	}
}
