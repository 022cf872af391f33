package eval

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/ingest"
)

// Unit is one retrieved result as the scorer sees it: the source it names
// (`<source name>/<path>`, as the route reports it), the text it hands the
// model and its heading path.
type Unit struct {
	Source      string   `json:"source"`
	Text        string   `json:"text"`
	HeadingPath []string `json:"heading_path,omitempty"`
}

// minCoverage is the share of a gold section's text a unit must hold to
// count for it by text: a window or a merged chunk that holds most of the
// section counts, a parent chunk holding only its own intro does not.
const minCoverage = 0.5

// minLine is the shortest line that counts for coverage: fences, rules and
// list markers are in every chunk.
const minLine = 4

// Gold holds, per question id, the gold file and the gold
// section's lines (its subsections included, as the question set defines a
// section), whitespace-normalised.
type Gold struct {
	source string
	byID   map[string]goldSection
}

type goldSection struct {
	file  string
	path  []string
	lines []string
	chars int
}

// NewGold finds each answerable question's gold section in the
// corpus. Gold files are named relative to the corpus; sources carry the
// source name in front, as ingestion names them.
func NewGold(source string, docs []ingest.Document, questions []Question) (Gold, error) {
	bySource := map[string]ingest.Document{}
	for _, d := range docs {
		bySource[d.Source] = d
	}
	g := Gold{source: source, byID: map[string]goldSection{}}
	for _, q := range questions {
		if !q.Answerable() {
			continue
		}
		file := path.Join(source, *q.GoldFile)
		section := goldSection{file: file, path: goldPath(q.GoldHeading)}
		d, ok := bySource[file]
		if !ok {
			return g, fmt.Errorf("question %s: its gold file %s is not in the corpus", q.ID, *q.GoldFile)
		}
		lines, paths, err := ingest.LinePaths(d.Content, "acl")
		if err != nil {
			return g, err
		}
		found := false
		for i, l := range lines {
			if !hasPrefix(paths[i], section.path) {
				continue
			}
			found = true
			if n := normalize(l); len(n) >= minLine {
				section.lines = append(section.lines, n)
				section.chars += len(n)
			}
		}
		if !found {
			return g, fmt.Errorf("question %s: %s has no section %q", q.ID, *q.GoldFile, strings.Join(q.GoldHeading, " › "))
		}
		g.byID[q.ID] = section
	}
	return g, nil
}

// GoldByPath is the questions' gold sections without the corpus: their
// files and heading paths alone (a live route scored where its documents
// cannot be read).
func GoldByPath(source string, questions []Question) Gold {
	g := Gold{source: source, byID: map[string]goldSection{}}
	for _, q := range questions {
		if q.Answerable() {
			g.byID[q.ID] = goldSection{file: path.Join(source, *q.GoldFile), path: goldPath(q.GoldHeading)}
		}
	}
	return g
}

// goldPath is a gold heading path, written as the file has it, as the
// chunker writes headings: without Hugo's attribute blocks
// (ingest.HeadingText), so "Location {#location}" in a question set
// matches the chunk's "Location". The eval set's README asks this of a
// chunker that changes heading text: the same normalization on both sides.
func goldPath(headings []string) []string {
	if headings == nil {
		return nil
	}
	out := make([]string, len(headings))
	for i, h := range headings {
		out[i] = ingest.HeadingText(h)
	}
	return out
}

// Hit reports whether u holds q's gold section: the same file and either
// exactly the gold heading path, or text that holds at least half of the
// gold section's text (reassembled parts included). Without the corpus
// (a live route scored where its documents cannot be read) the section's
// text is unknown; then a unit of an enclosing section whose text holds
// the gold section's heading line counts: the chunker merged the short
// section into its parent's chunk, whole.
func (g Gold) Hit(u Unit, q Question) bool {
	gold, ok := g.byID[q.ID]
	if !ok || u.Source != gold.file {
		return false
	}
	if slices.Equal(u.HeadingPath, gold.path) {
		return true
	}
	if gold.chars == 0 {
		return hasPrefix(gold.path, u.HeadingPath) && len(gold.path) > len(u.HeadingPath) && holdsHeading(u.Text, gold.path[len(gold.path)-1])
	}
	return coverage(normalize(u.Text), gold) >= minCoverage
}

// holdsHeading reports whether text has a Markdown heading line reading
// heading, at any level.
func holdsHeading(text, heading string) bool {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		title := strings.TrimLeft(line, "#")
		if title != line && strings.HasPrefix(title, " ") && strings.TrimSpace(title) == heading {
			return true
		}
	}
	return false
}

// fileHit reports whether u comes from q's gold file.
func (g Gold) fileHit(u Unit, q Question) bool {
	gold, ok := g.byID[q.ID]
	return ok && u.Source == gold.file
}

// coverage is the share of the gold section's characters, by whole lines,
// that text holds.
func coverage(text string, gold goldSection) float64 {
	held := 0
	for _, l := range gold.lines {
		if strings.Contains(text, l) {
			held += len(l)
		}
	}
	return float64(held) / float64(gold.chars)
}

func hasPrefix(p, prefix []string) bool {
	return len(p) >= len(prefix) && slices.Equal(p[:len(prefix)], prefix)
}

// normalize collapses whitespace, so a chunker that rejoins lines still
// holds the same text.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }
