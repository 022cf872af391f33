package ingestion

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// A document whose front matter grants an invalid principal is refused
// and reported by name and entry; the source's other documents are read.
func TestInvalidACLEntryRefusesItsDocument(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"paging.md":  "---\nacl: [group:sre]\n---\n# Paging\n\nAcknowledge the page.\n",
		"secrets.md": "---\nacl: [group:sre, \"group:\\u00a0ops\"]\n---\n# Secrets\n\nThe admin password.\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := podconfig.IngestConfig{
		Chunking: podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources:  []podconfig.Source{{Name: "runbooks", Path: dir, Principals: []string{"group:staff", "group:sre"}}},
	}
	var summary Summary
	rows, err := readRows(context.Background(), cfg, inputLimit{}, &summary)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`runbooks/secrets.md: front matter acl: principal "group:\u00a0ops": the name contains U+00A0 (no-break space)`}
	if !slices.Equal(summary.Rejected, want) {
		t.Errorf("rejected %q, want %q", summary.Rejected, want)
	}
	if summary.Files != 1 || len(rows) == 0 {
		t.Fatalf("read %d files, %d rows; want paging.md's", summary.Files, len(rows))
	}
	for _, row := range rows {
		if row.Source != "runbooks/paging.md" || !slices.Equal(row.ACL, []string{"group:sre"}) {
			t.Errorf("row %s with ACL %q", row.Source, row.ACL)
		}
	}
}
