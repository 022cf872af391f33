package answer

import (
	"context"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/knowledge"
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

// answerUnits are the fragments' units, in order.
func answerUnits(fragments []retrieval.Fragment) []unit {
	var out []unit
	for fi, f := range fragments {
		for n, text := range FragmentUnits(f.Text) {
			out = append(out, unit{fragment: fi, index: n, text: text})
		}
	}
	return out
}

// FragmentUnits splits a fragment's text into its units: list items (as
// ingestion keeps them whole) and code blocks whole, prose by sentence;
// a unit without a content word is none. Markdown wraps lines anywhere,
// so a paragraph's lines (and a list item's continuation lines) are
// joined before sentences are cut. Ingestion cuts every chunk with it to
// store the units' vectors (knowledge.Row.Units): one rule, so that a
// turn finds them.
func FragmentUnits(text string) []string {
	var out []string
	add := func(unit string) {
		if unit = strings.TrimSpace(unit); len(retrieval.ContentWords(unit)) > 0 {
			out = append(out, unit)
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
	for _, line := range strings.Split(text, "\n") {
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
	return out
}

// unitVectors are the vectors of the fragments' units: those ingestion
// stored (read from stored, when set), the others embedded by embedder;
// embedded counts the latter.
func unitVectors(ctx context.Context, stored StoredUnits, embedder knowledge.Embedder, fragments []retrieval.Fragment,
	units []unit) (vectors [][]float32, embedded int, err error) {
	vectors = make([][]float32, len(units))
	have := storedVectors(ctx, stored, fragments)
	var missing []string
	var at []int
	for i, u := range units {
		if v, ok := have[knowledge.UnitHash(u.text)]; ok {
			vectors[i] = v
		} else {
			missing, at = append(missing, u.text), append(at, i)
		}
	}
	if len(missing) > 0 {
		fresh, err := embedder.Embed(ctx, missing)
		if err != nil {
			return nil, 0, err
		}
		for j, i := range at {
			vectors[i] = fresh[j]
		}
	}
	return vectors, len(missing), nil
}

// storedUnitsTimeout bounds reading the stored vectors (a query by id);
// past it the units are embedded instead.
const storedUnitsTimeout = 5 * time.Second

// storedVectors reads the stored vectors of the fragments' units; none
// when there is no store to read, or the read fails (the units are
// embedded instead: slower, not failed).
func storedVectors(ctx context.Context, stored StoredUnits, fragments []retrieval.Fragment) map[uint64][]float32 {
	if stored == nil {
		return nil
	}
	ids, parents := retrieval.RowIDs(fragments)
	ctx, cancel := context.WithTimeout(ctx, storedUnitsTimeout)
	defer cancel()
	vectors, err := stored.UnitVectors(ctx, ids, parents)
	if err != nil {
		return nil
	}
	return vectors
}
