package ingestion

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// A chunk the store's schema would refuse (here 65 image URLs, one more
// than the field holds) refuses its document when the rows are read,
// before anything is embedded: the other documents are still ingested,
// where the upsert's error used to end the whole sync.
func TestARowTheSchemaRefusesRefusesItsDocumentAlone(t *testing.T) {
	dir := t.TempDir()
	var images strings.Builder
	images.WriteString("# Gallery\n\n")
	for i := range 65 {
		fmt.Fprintf(&images, "![%d](img/%d.png) ", i, i)
	}
	writeFile(t, dir, "gallery.md", images.String()+"\n")
	writeFile(t, dir, "paging.md", "# Paging\n\nAcknowledge the page.\n")
	cfg := podconfig.IngestConfig{
		Chunking: podconfig.Chunking{MaxTokens: 4000, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources:  []podconfig.Source{{Name: "runbooks", Path: dir, Principals: []string{"group:sre"}}},
	}
	var summary Summary
	rows, err := readRows(context.Background(), cfg, inputLimit{}, &summary)
	if err != nil {
		t.Fatal(err)
	}
	if len(summary.Rejected) != 1 || !strings.Contains(summary.Rejected[0], "runbooks/gallery.md: refused: chunk") ||
		!strings.Contains(summary.Rejected[0], "image_urls is 65 long, limit 64") {
		t.Errorf("rejected %q, want gallery.md named with its field", summary.Rejected)
	}
	if summary.Files != 1 || len(rows) != 1 || rows[0].Source != "runbooks/paging.md" {
		t.Errorf("read %d files, %d rows; want paging.md's", summary.Files, len(rows))
	}
}

// The chunker's limits are within the schema's: a chunk at every limit
// at once is a row the store takes. (Were one raised past the schema,
// every document reaching it would be refused.)
func TestTheChunkersLimitsFitTheSchema(t *testing.T) {
	heading := strings.Repeat("h", ingest.MaxHeadingBytes)
	ch := ingest.Chunk{
		ID: strings.Repeat("a", 32), DocID: strings.Repeat("b", 32), Source: "s/a.md", URI: "s/a.md",
		Title:       strings.Repeat("t", ingest.MaxTitleBytes),
		HeadingPath: []string{heading, heading, heading, heading, heading, heading}, // six levels of ATX headings
		Type:        ingest.TypeSubsection, Kind: ingest.KindProse, PartIndex: 1, PartCount: 1,
		ACL: []string{"public"}, ContentHash: strings.Repeat("c", 64),
		Text: strings.Repeat("x", ingest.MaxTextBytes),
	}
	if err := RowFromChunk(ch).CheckFields(); err != nil {
		t.Errorf("a chunk at the chunker's limits: %v", err)
	}
}
