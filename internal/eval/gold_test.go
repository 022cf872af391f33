package eval

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
)

// A live route is scored without its documents (a RouteEvaluation's Job
// cannot read them): a short section the chunker merged into its parent
// comes back under the parent's heading path, and still counts for its
// own gold, by its heading line in the chunk's text.
func TestWithoutTheCorpusAMergedSectionCountsByItsHeadingLine(t *testing.T) {
	content, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "docs", "handbook", "expenses.md"))
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := ingest.Chunks(ingest.Document{Source: "handbook/expenses.md", Content: string(content)}, ingest.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var merged *ingest.Chunk
	for i, c := range chunks {
		if c.Type == ingest.TypeMerged {
			merged = &chunks[i]
		}
	}
	if merged == nil || len(merged.HeadingPath) != 1 {
		t.Fatalf("the sample's expenses.md is no longer one merged chunk under its title: %+v", chunks)
	}
	unit := Unit{Source: merged.Source, Text: merged.Text, HeadingPath: merged.HeadingPath}
	question := func(id string, heading ...string) Question {
		file := "expenses.md"
		return Question{ID: id, Question: "?", GoldFile: &file, GoldHeading: heading}
	}
	questions := []Question{
		question("receipts", "Expenses", "Receipts"),
		question("approval", "Expenses", "How approval works"),
		question("title", "Expenses"),
		question("absent", "Expenses", "Mileage"),
		question("elsewhere", "Travel", "Receipts"),
	}
	gold := GoldByPath("handbook", questions)
	// "How approval works" is long enough to be a chunk of its own, so the
	// merged chunk does not hold it.
	want := map[string]bool{"receipts": true, "approval": false, "title": true, "absent": false, "elsewhere": false}
	for _, q := range questions {
		if got := gold.Hit(unit, q); got != want[q.ID] {
			t.Errorf("%s (gold %v): hit %v, want %v", q.ID, q.GoldHeading, got, want[q.ID])
		}
	}
	// A heading named in prose is not a heading line.
	prose := Unit{Source: unit.Source, HeadingPath: unit.HeadingPath, Text: "# Expenses\n\nSee Receipts below.\n\nMileage is paid monthly."}
	if gold.Hit(prose, questions[0]) || gold.Hit(prose, questions[3]) {
		t.Error("a heading's words in prose counted as its heading line")
	}
}

func TestHoldsHeading(t *testing.T) {
	for text, want := range map[string]bool{
		"## Receipts\nAttach them.": true,
		"intro\n  ### Receipts  \n": true,
		"Receipts":                  false,
		"##Receipts":                false,
		"## Receipts and refunds":   false,
		"#### Receipts":             true,
		"text ## Receipts":          false,
	} {
		if got := holdsHeading(text, "Receipts"); got != want {
			t.Errorf("holdsHeading(%q) = %v, want %v", text, got, want)
		}
	}
}
