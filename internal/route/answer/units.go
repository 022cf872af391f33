package answer

import (
	"strings"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// unit is a sentence, a list item or a code block of a packed fragment:
// what an extractive answer may quote, and what the grounding check holds
// the answer's sentences against.
type unit struct {
	fragment, index int
	text            string
	score           float64
}

// answerUnits splits the fragments into units: list items (as ingestion
// keeps them whole) and code blocks whole, prose by sentence. Markdown
// wraps lines anywhere, so a paragraph's lines (and a list item's
// continuation lines) are joined before sentences are cut.
func answerUnits(fragments []retrieval.Fragment) []unit {
	var out []unit
	for fi, f := range fragments {
		n := 0
		add := func(text string) {
			if text = strings.TrimSpace(text); len(retrieval.ContentWords(text)) > 0 {
				out = append(out, unit{fragment: fi, index: n, text: text})
				n++
			}
		}
		var prose, item []string // the paragraph or list item being read
		endBlock := func() {
			if len(item) > 0 {
				add(strings.Join(item, " "))
			}
			for _, sentence := range Sentences(strings.Join(prose, " ")) {
				add(sentence)
			}
			prose, item = nil, nil
		}
		inCode, code := false, ""
		for _, line := range strings.Split(f.Text, "\n") {
			trimmed := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(trimmed, "```"):
				if !inCode {
					endBlock()
				}
				code += line + "\n"
				if inCode {
					add(code)
					code = ""
				}
				inCode = !inCode
			case inCode:
				code += line + "\n"
			case trimmed == "", strings.HasPrefix(trimmed, "#"):
				endBlock() // headings are in the citation label
			case ingest.IsListItem(trimmed):
				endBlock()
				item = []string{trimmed}
			case len(item) > 0:
				item = append(item, trimmed) // the item goes on
			default:
				prose = append(prose, trimmed)
			}
		}
		endBlock()
		add(code) // an unclosed block
	}
	return out
}

func unitTexts(units []unit) []string {
	out := make([]string, len(units))
	for i, u := range units {
		out[i] = u.text
	}
	return out
}
