package ingestion

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// A document that takes longer than the per-document bound to chunk (a
// page of the largest size, given 100ms here), or whose chunks would
// repeat too much of it, is one refused document, named with the bound
// it passed: the rest is still ingested.
func TestADocumentPastItsBoundsIsRefusedAndTheRestIngested(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "paging.md", "# Paging\n\nAcknowledge the page.\n")
	words := "Überprüfen Sie die Größe des Volumens, bevor Sie es ändern. "
	writeFile(t, dir, "slow.md", "# Slow\n\n"+strings.Repeat(words, (ingest.MaxDocumentBytes-1024)/len(words)))
	writeFile(t, dir, "wide.md", "# Wide\n\n| "+strings.Repeat("h", 25<<10)+" |\n|---|\n"+strings.Repeat("| a |\n", 2000))
	cfg := podconfig.IngestConfig{
		Chunking: podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources:  []podconfig.Source{{Name: "runbooks", Path: dir, Principals: []string{"group:sre"}}},
	}
	var summary Summary
	rows, err := readRowsWithin(context.Background(), cfg, inputLimit{}, 100*time.Millisecond, &summary)
	if err != nil {
		t.Fatal(err)
	}
	if len(summary.Rejected) != 2 || summary.Rejected[0] != "runbooks/slow.md: took longer than 100ms to read: refused" ||
		!strings.HasPrefix(summary.Rejected[1], "runbooks/wide.md: its chunks would repeat more than") {
		t.Errorf("rejected %q, want slow.md and wide.md named with their bounds", summary.Rejected)
	}
	if summary.Files != 1 || len(rows) != 1 || rows[0].Source != "runbooks/paging.md" {
		t.Errorf("read %d files, %d rows; want paging.md's", summary.Files, len(rows))
	}
}
