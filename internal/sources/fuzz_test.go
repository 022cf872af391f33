package sources

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
)

// FuzzReadMarkdown builds a source tree from the fuzzer's bytes (files,
// folders nested deep, links inside and out of the tree, to devices and
// to the process's environment, FIFOs, large files) and reads it: the read
// never hangs, and every document it returns is a regular file of the tree
// holding nothing from outside it.
func FuzzReadMarkdown(f *testing.F) {
	for _, seed := range [][]byte{{0, 1, 2, 3, 4, 5, 6, 7}, {3, 3, 3, 9, 1}, {6, 0, 6, 1, 6, 2}, {2, 2, 2, 2, 2, 2, 0}, {5, 4, 7, 0}} {
		f.Add(seed)
	}
	outside := filepath.Join(f.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("CANARY"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		root := t.TempDir()
		dir := root
		var made []string
		for i, op := range ops[:min(len(ops), 64)] {
			name := filepath.Join(dir, fmt.Sprintf("f%d.md", i))
			switch op % 8 {
			case 0:
				_ = os.WriteFile(name, []byte("# Doc\n\nText.\n"), 0o644)
			case 1:
				dir = filepath.Join(dir, fmt.Sprintf("d%d", i)) // deeper
				_ = os.MkdirAll(dir, 0o755)
			case 2:
				_ = os.Symlink(outside, name)
			case 3:
				rel, _ := filepath.Rel(dir, outside)
				_ = os.Symlink(rel, name)
			case 4:
				_ = syscall.Mkfifo(name, 0o644)
			case 5:
				_ = os.Symlink([]string{"/dev/zero", "/proc/self/environ", "/dev/null"}[int(op/8)%3], name)
			case 6:
				if len(made) > 0 { // a link to another file of the tree
					_ = os.Symlink(made[int(op/8)%len(made)], name)
				}
			case 7:
				_ = os.WriteFile(name, []byte(strings.Repeat("y", ingest.MaxDocumentBytes+int(op))), 0o644)
			}
			if op%8 == 0 {
				made = append(made, name)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			read, _ := ReadMarkdown(root, "", nil)
			for _, d := range read.Documents {
				if strings.Contains(d.Content, "CANARY") || len(d.Content) > ingest.MaxDocumentBytes {
					t.Errorf("document %s holds what the tree does not", d.Source)
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the read hangs")
		}
	})
}
