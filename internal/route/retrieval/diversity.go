package retrieval

import (
	"math"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// Diversity is how many fragments of one document a search keeps. The best
// fragment of each document always enters, in order; a further fragment of
// the same document enters only when it is nearly as similar to the
// question as that document's best: a question whose answer is its
// document's second section does not lose it, and a document with one
// good section does not crowd the others out.
type Diversity struct {
	// Margin is how far below its document's best fragment, in cosine
	// similarity (Fragment.Similarity, also when a cross-encoder ranked
	// them), a further fragment may be and still enter. 0 keeps one
	// fragment per document.
	Margin float64
	// MaxPerDocument caps the fragments of one document; 0 means 1.
	MaxPerDocument int
	// Dominance, when set, is the share of the first dominanceWindow
	// candidates that makes a document the question's subject: its
	// further fragments enter by rank alone, without margin or cap. When
	// the fusion ranks four of one document's sections among its best ten,
	// the answer is somewhere in that document, and the margin would
	// otherwise trade its sections for weaker documents' best.
	Dominance float64
}

// dominanceWindow is how many of the first candidates (split sections
// counted once) Dominance looks at: the ten a search usually keeps, fixed
// so that a route keeping three fragments does not see every document as
// dominant.
const dominanceWindow = 10

// apply keeps fragments by the rule, in their order. Parts of one split
// section count once: reassembly hands the model the whole section for
// any of them.
func (d Diversity) apply(fragments []Fragment) []Fragment {
	limit := max(d.MaxPerDocument, 1)
	dominant := d.dominant(fragments)
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
			best[f.DocID] = f.Similarity
		case dominant[f.DocID]:
		case kept[f.DocID] >= limit || f.Similarity < top-d.Margin:
			continue
		}
		kept[f.DocID]++
		sections[f.section()] = true
		out = append(out, f)
	}
	return out
}

// dominant names the documents holding at least the Dominance share of
// the first dominanceWindow fragments, each split section counted once.
func (d Diversity) dominant(fragments []Fragment) map[string]bool {
	out := map[string]bool{}
	if d.Dominance <= 0 {
		return out
	}
	sections := map[string]bool{}
	count := map[string]int{}
	seen := 0
	for _, f := range fragments {
		if seen == dominanceWindow {
			break
		}
		if sections[f.section()] {
			continue
		}
		sections[f.section()] = true
		count[f.DocID]++
		seen++
	}
	// Rounded up, and with room for float error: 0.3 of ten is three.
	need := int(math.Ceil(d.Dominance*dominanceWindow - 1e-9))
	for doc, n := range count {
		if n >= need {
			out[doc] = true
		}
	}
	return out
}

// DefaultDiversity is the route's rule unless it says otherwise: up to
// three fragments of a document, each within 0.05 of the document's best,
// except for a document holding four of the best ten candidates.
func DefaultDiversity() Diversity { return Diversity{Margin: 0.05, MaxPerDocument: 3, Dominance: 0.4} }

// DefaultWeights are the fusion weights of a store that names none
// (v1alpha1.DefaultSearchWeights says why).
func DefaultWeights() map[knowledge.Primitive]float64 {
	return map[knowledge.Primitive]float64{knowledge.TextDense: 1, knowledge.TextSparse: 0.5, knowledge.TitleDense: 0, knowledge.TitleSparse: 0}
}
