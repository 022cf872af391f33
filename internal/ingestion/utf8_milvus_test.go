package ingestion

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

// A byte that is not UTF-8, in a page's text (a Latin-1 "café") or in a
// file's name, refuses that document alone, naming it: the rest is
// ingested and a removed document deleted. Before, the row check let it
// through and the upsert's gRPC marshal failed the run before any
// deletion, naming no document.
func TestADocumentThatIsNotUTF8IsRefusedAndTheRestIngested(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	docs := t.TempDir()
	writeFile(t, docs, "paging.md", "# Paging\n\nAcknowledge the page within five minutes.\n")
	writeFile(t, docs, "retired.md", "# Retired\n\nThe old escalation path, now withdrawn.\n")
	embedder := &testenv.HashEmbedder{Dim: 16}
	first, err := ingestDir(ctx, t, "latin1", docs, embedder)
	if err != nil {
		t.Fatal(err)
	}

	if err := os.Remove(filepath.Join(docs, "retired.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, docs, "menu.md", "# Menu\n\nCoffee at the caf\xe9 on the ground floor.\n")
	writeFile(t, docs, "caf\xe9.md", "# Lunch\n\nThe canteen opens at noon.\n")
	writeFile(t, docs, "heading.md", "# Caf\xe9\n")
	writeFile(t, docs, "title.md", "---\ntitle: Caf\xe9\n---\nThe menu.\n")
	second, err := ingestDir(ctx, t, "latin1", docs, embedder)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	rejected := strings.Join(second.Rejected, "\n")
	for _, want := range []string{
		`handbook/menu.md: refused: chunk`, `): text is not UTF-8`,
		`"handbook/caf\xe9.md": refused: chunk`, `source is not UTF-8`,
		`handbook/heading.md: refused: chunk`, `title is not UTF-8; heading_path is not UTF-8`,
		`handbook/title.md: front matter is not valid YAML`, // refused by the YAML parser already
	} {
		if !strings.Contains(rejected, want) {
			t.Errorf("refused %q, want %s", second.Rejected, want)
		}
	}
	if len(second.Rejected) != 4 || second.Files != 1 {
		t.Errorf("refused %d and read %d documents, want 4 and paging.md", len(second.Rejected), second.Files)
	}
	if r := second.Result; r.Deleted == 0 || r.Rows != int64(first.Chunks-r.Deleted) {
		t.Errorf("second run %+v after %d chunks: want retired.md's rows deleted and paging.md's kept", r, first.Chunks)
	}
}
