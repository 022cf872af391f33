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

// Every string field of a row is checked for UTF-8 (the gRPC marshal of
// an upsert fails on any byte that is not), so a Latin-1 page or file
// name refuses its document before anything is embedded, naming the field.
func TestARowWithAByteThatIsNotUTF8IsRefused(t *testing.T) {
	const latin1 = "caf\xe9"
	valid := func() ingest.Chunk {
		return ingest.Chunk{ID: "id", DocID: "doc", Source: "s/a.md", URI: "s/a.md", Title: "T", HeadingPath: []string{"H"},
			Type: ingest.TypeSection, Kind: ingest.KindProse, ParentID: "p", ImageURLs: []string{"a.png"},
			ACL: []string{"public"}, ContentHash: "c", Text: "x", Flagged: "f", PartIndex: 1, PartCount: 1}
	}
	if err := RowFromChunk(valid()).CheckFields(); err != nil {
		t.Fatalf("a valid row: %v", err)
	}
	for field, set := range map[string]func(*ingest.Chunk){
		"id": func(c *ingest.Chunk) { c.ID = latin1 }, "doc_id": func(c *ingest.Chunk) { c.DocID = latin1 },
		"source": func(c *ingest.Chunk) { c.Source = latin1 }, "source_uri": func(c *ingest.Chunk) { c.URI = latin1 },
		"title": func(c *ingest.Chunk) { c.Title = latin1 }, "heading_path": func(c *ingest.Chunk) { c.HeadingPath[0] = latin1 },
		"chunk_type": func(c *ingest.Chunk) { c.Type = latin1 }, "kind": func(c *ingest.Chunk) { c.Kind = latin1 },
		"parent_id": func(c *ingest.Chunk) { c.ParentID = latin1 }, "image_urls": func(c *ingest.Chunk) { c.ImageURLs[0] = latin1 },
		"acl": func(c *ingest.Chunk) { c.ACL[0] = latin1 }, "content_hash": func(c *ingest.Chunk) { c.ContentHash = latin1 },
		"text": func(c *ingest.Chunk) { c.Text = latin1 }, "flagged": func(c *ingest.Chunk) { c.Flagged = latin1 },
	} {
		ch := valid()
		set(&ch)
		if err := RowFromChunk(ch).CheckFields(); err == nil || !strings.Contains(err.Error(), field+" is not UTF-8") {
			t.Errorf("%s not UTF-8: CheckFields() = %v", field, err)
		}
	}
}
