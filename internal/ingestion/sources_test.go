package ingestion

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// writeFile creates a file under dir, with its folders.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readRows collects the stream of cfg's rows, as a run reads them.
func readRows(ctx context.Context, cfg podconfig.IngestConfig, limit inputLimit, summary *Summary) ([]knowledge.Row, error) {
	return readRowsWithin(ctx, cfg, limit, 0, summary)
}

// readRowsWithin is readRows giving each document docTimeout to chunk.
func readRowsWithin(ctx context.Context, cfg podconfig.IngestConfig, limit inputLimit, docTimeout time.Duration, summary *Summary) ([]knowledge.Row, error) {
	stream, closeSources, err := streamRows(ctx, cfg, limit, docTimeout, summary, quiet{})
	if err != nil {
		return nil, err
	}
	defer closeSources()
	var rows []knowledge.Row
	for row, err := range stream {
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// A PVC source whose path a writer replaced with a link to another
// source's mount would ingest that source's salaries.md under its own,
// public readers. The run fails, naming the source and its path, before
// a row exists: no document is read under the wrong readers.
func TestASourcePathThatIsALinkFailsTheRun(t *testing.T) {
	mounts := t.TempDir() // as the Job sees /sources
	writeFile(t, mounts, "finance/salaries.md", "# Salaries\n\nThe CEO earns a lot.\n")
	writeFile(t, mounts, "wiki/readme.md", "# Wiki\n")
	if err := os.Symlink("../finance", filepath.Join(mounts, "wiki", "docs")); err != nil {
		t.Fatal(err)
	}
	cfg := podconfig.IngestConfig{
		Chunking: podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources: []podconfig.Source{
			{Name: "finance", Root: filepath.Join(mounts, "finance"), Path: filepath.Join(mounts, "finance"), Principals: []string{"group:finance"}},
			{Name: "wiki", Root: filepath.Join(mounts, "wiki"), Path: filepath.Join(mounts, "wiki", "docs"), Principals: []string{"public"}},
		},
	}
	var summary Summary
	rows, err := readRows(context.Background(), cfg, inputLimit{}, &summary)
	if err == nil || !strings.Contains(err.Error(), "source wiki") || !strings.Contains(err.Error(), "docs is a symbolic link, the source's path: refused") {
		t.Fatalf("readRows() = %v, want the wiki source's path refused", err)
	}
	for _, row := range rows {
		if slices.Contains(row.ACL, "public") {
			t.Errorf("row %s ingested for public", row.Source)
		}
	}
}

// A file over the size limit or a link to nothing is one refused
// document: reported by source and name, the rest still ingested.
func TestAnUnreadableDocumentIsRefusedAndTheRestIngested(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "paging.md", "# Paging\n\nAcknowledge the page.\n")
	writeFile(t, dir, "huge.md", strings.Repeat("x", ingest.MaxDocumentBytes+1))
	if err := os.Symlink("gone.md", filepath.Join(dir, "dangling.md")); err != nil {
		t.Fatal(err)
	}
	cfg := podconfig.IngestConfig{
		Chunking: podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources:  []podconfig.Source{{Name: "runbooks", Path: dir, Principals: []string{"group:sre"}}},
	}
	var summary Summary
	rows, err := readRows(context.Background(), cfg, inputLimit{}, &summary)
	if err != nil {
		t.Fatal(err)
	}
	if len(summary.Rejected) != 2 || !strings.Contains(summary.Rejected[0], "source runbooks: dangling.md: a link to gone.md, which leads nowhere") ||
		!strings.Contains(summary.Rejected[1], "source runbooks: huge.md is over 8388608 bytes") {
		t.Errorf("rejected %q, want dangling.md and huge.md named", summary.Rejected)
	}
	if summary.Files != 1 || len(rows) == 0 || rows[0].Source != "runbooks/paging.md" {
		t.Errorf("read %d files, %d rows; want paging.md's", summary.Files, len(rows))
	}
}

// Every document refused empties the store no more than no document
// does: the run stops before a sync could delete the serving rows.
func TestEveryDocumentRefusedStopsTheRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("gone.md", filepath.Join(dir, "dangling.md")); err != nil {
		t.Fatal(err)
	}
	cfg := podconfig.IngestConfig{
		Chunking: podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources:  []podconfig.Source{{Name: "runbooks", Path: dir, Principals: []string{"group:sre"}}},
	}
	var summary Summary
	if _, err := readRows(context.Background(), cfg, inputLimit{}, &summary); err == nil || !strings.Contains(err.Error(), "refusing to empty the store") {
		t.Errorf("readRows() = %v, want the run stopped", err)
	}
}
