package eval

import (
	"os"
	"path/filepath"
	"strings"
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

func TestGoldHoldsTheSectionByPathOrText(t *testing.T) {
	doc := ingest.Document{Source: "docs/faq.md", Content: "# FAQ\n\nIntro to the FAQ.\n\n## Redis\n\nRedis intro line.\n\n" +
		"### File-based\n\nSet REDIS_CREDS_DIR_PATH to the mount directory.\nThe auth file holds the password.\n\n## Other\n\nSomething else entirely.\n"}
	gold := "faq.md"
	q := Question{ID: "q1", GoldFile: &gold, GoldHeading: []string{"FAQ", "Redis", "File-based"}}
	g, err := NewGold("docs", []ingest.Document{doc}, []Question{q})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		unit Unit
		want bool
	}{
		{"the exact heading path", Unit{Source: "docs/faq.md", HeadingPath: []string{"FAQ", "Redis", "File-based"}, Text: "part 2 of it"}, true},
		{"a parent holding only its own intro", Unit{Source: "docs/faq.md", HeadingPath: []string{"FAQ", "Redis"}, Text: "## Redis\n\nRedis intro line."}, false},
		{"a window holding the section, rejoined", Unit{Source: "docs/faq.md", Text: "Redis intro line. ### File-based Set REDIS_CREDS_DIR_PATH to the mount directory. The auth file holds the password."}, true},
		{"a window holding a little of it", Unit{Source: "docs/faq.md", Text: "The auth file holds the password.\n## Other"}, false},
		{"the same text in another file", Unit{Source: "docs/other.md", HeadingPath: []string{"FAQ", "Redis", "File-based"}}, false},
		{"a file named without its source", Unit{Source: "faq.md", HeadingPath: []string{"FAQ", "Redis", "File-based"}}, false},
		{"a sibling", Unit{Source: "docs/faq.md", HeadingPath: []string{"FAQ", "Other"}, Text: "Something else entirely."}, false},
	}
	for _, tc := range cases {
		if got := g.Hit(tc.unit, q); got != tc.want {
			t.Errorf("%s: hit = %v", tc.name, got)
		}
	}
	// A question set that does not match the corpus is refused, naming it.
	other := "other.md"
	for _, bad := range []Question{
		{ID: "q2", GoldFile: &other, GoldHeading: []string{"FAQ"}},
		{ID: "q3", GoldFile: &gold, GoldHeading: []string{"FAQ", "Redis", "Typo"}},
	} {
		if _, err := NewGold("docs", []ingest.Document{doc}, []Question{bad}); err == nil || !strings.Contains(err.Error(), bad.ID) {
			t.Errorf("question %s: err %v", bad.ID, err)
		}
	}
}

// A question set writes gold heading paths as the file has them, Hugo's
// {#id} included; the chunker drops the id, and the scorer drops it from
// the gold path too, with and without the corpus.
func TestGoldHeadingIDsAreNormalizedAsTheChunkerDoes(t *testing.T) {
	content, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", "hugo", "otel-contributing-prerequisites.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := ingest.Document{Source: "opentelemetry/contributing/prerequisites.md", Content: string(content)}
	chunks, err := ingest.Chunks(doc, ingest.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var cla *ingest.Chunk
	for i, c := range chunks {
		if strings.Join(c.HeadingPath, " › ") == "Sign the CNCF CLA" {
			cla = &chunks[i]
		}
	}
	if cla == nil {
		t.Fatalf("no chunk with the heading path [Sign the CNCF CLA]: %+v", chunks)
	}
	file := "contributing/prerequisites.md"
	q := Question{ID: "cla", Question: "Do I need to sign anything?", GoldFile: &file, GoldHeading: []string{"Sign the CNCF CLA {#cla}"}}
	withCorpus, err := NewGold("opentelemetry", []ingest.Document{doc}, []Question{q})
	if err != nil {
		t.Fatal(err)
	}
	// The path alone decides: the unit's text holds none of the section.
	unit := Unit{Source: cla.Source, HeadingPath: cla.HeadingPath}
	for name, gold := range map[string]Gold{"with the corpus": withCorpus, "without it": GoldByPath("opentelemetry", []Question{q})} {
		if !gold.Hit(unit, q) {
			t.Errorf("%s: the chunk %q does not hit the gold path %q", name, cla.HeadingPath, q.GoldHeading)
		}
	}
}
