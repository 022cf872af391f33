package retrieval

import "github.com/ragroute/ragroute/internal/knowledge"

// Diversity is how many fragments of one document a search keeps. The best
// fragment of each document always enters, in order; a further fragment of
// the same document enters only when it is nearly as similar to the
// question as that document's best: a question whose answer is its
// document's second section does not lose it, and a document with one
// good section does not crowd the others out.
type Diversity struct {
	// Margin is how far below its document's best fragment (in the
	// fragment score, cosine similarity unless a cross-encoder rescored)
	// a further fragment may score and still enter. 0 keeps one fragment
	// per document.
	Margin float64
	// MaxPerDocument caps the fragments of one document; 0 means 1.
	MaxPerDocument int
}

// apply keeps fragments by the rule, in their order. Parts of one split
// section count once: reassembly hands the model the whole section for
// any of them.
func (d Diversity) apply(fragments []Fragment) []Fragment {
	limit := max(d.MaxPerDocument, 1)
	best := map[string]float64{}
	kept := map[string]int{}
	sections := map[string]bool{}
	var out []Fragment
	for _, f := range fragments {
		top, seen := best[f.DocID]
		switch {
		case sections[f.section()]:
			continue
		case !seen:
			best[f.DocID] = f.Score
		case kept[f.DocID] >= limit || f.Score < top-d.Margin:
			continue
		}
		kept[f.DocID]++
		sections[f.section()] = true
		out = append(out, f)
	}
	return out
}

// DefaultDiversity is the route's rule unless it says otherwise: up to
// three fragments of a document, each within 0.05 of the document's best.
func DefaultDiversity() Diversity { return Diversity{Margin: 0.05, MaxPerDocument: 3} }

// DefaultWeights are the fusion weights of a store that names none: the
// text vectors embed each chunk's title path, so the title primitives
// mostly repeat them and weigh a quarter.
func DefaultWeights() map[knowledge.Primitive]float64 {
	return map[knowledge.Primitive]float64{knowledge.TextDense: 1, knowledge.TextSparse: 1, knowledge.TitleDense: 0.25, knowledge.TitleSparse: 0.25}
}
