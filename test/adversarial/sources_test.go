package adversarial

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	chunking "github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/ingestion"
	"github.com/ragroute/ragroute/internal/sources"
)

// markerPattern matches what markerOf writes.
var markerPattern = regexp.MustCompile(`SECRETMARK-[0-9]+-`)

// sourceCorpus is rows read and chunked from files as an ingestion run
// reads them, markers numbered from first, their ACLs added to acl:
//   - ops/runbook.md, readable by group:ops, under a heading of 600
//     bytes (over the schema's 512: the chunker cuts it, where the
//     store's refusal used to stop the whole ingestion);
//   - finance/salaries.md, readable by group:opsx;
//   - a public wiki source whose path docs a PVC writer replaced with a
//     link to the finance mount. The read is refused; were it not, the
//     salaries would be ingested again for public, and the harness would
//     count every public caller who sees their marker as a leak.
func sourceCorpus(t *testing.T, first int, acl map[string][]string) []corpusRow {
	t.Helper()
	mounts := t.TempDir() // as the ingest Job sees /sources
	n := first
	write := func(name, heading string) string {
		m := markerOf(n)
		n++
		path := filepath.Join(mounts, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		body := "# Deploy notes\n\n## " + heading + "\n\n" + m + " " + vocabulary + "\n"
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return m
	}
	write("ops/runbook.md", strings.Repeat("Überlange Überschrift ", 28)) // 616 bytes
	write("finance/salaries.md", "Salaries")
	if err := os.MkdirAll(filepath.Join(mounts, "wiki"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../finance", filepath.Join(mounts, "wiki", "docs")); err != nil {
		t.Fatal(err)
	}

	var rows []corpusRow
	for _, src := range []struct {
		name, root, path string
		principals       []string
	}{
		{"ops", "ops", "", []string{"group:ops"}},
		{"finance", "finance", "", []string{"group:opsx"}},
		{"wiki", "wiki", "docs", []string{"public"}},
	} {
		read, err := sources.ReadMarkdown(filepath.Join(mounts, src.root), src.path, src.principals)
		if err != nil {
			t.Logf("source %s refused: %v", src.name, err)
			continue
		}
		for _, doc := range read.Documents {
			doc.Source = src.name + "/" + doc.Source
			chunks, err := chunking.Chunks(doc, chunking.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range chunks {
				r := ingestion.RowFromChunk(ch)
				marker := markerPattern.FindString(r.Text)
				if _, seen := acl[marker]; !seen {
					acl[marker] = r.ACL // the first source to hold it is the one whose readers it has
				}
				rows = append(rows, corpusRow{Row: r, Marker: marker})
			}
		}
	}
	return rows
}
