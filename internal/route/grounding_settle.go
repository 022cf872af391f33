package route

import (
	"strings"

	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// Replacement reasons of answer.replaced.
const (
	replacedBelowRatio  = "below fallbackBelow"
	replacedAllWithheld = "every sentence withheld"
)

// settle ends a checked answer: the grounding summary, then either the
// citations (written, then inferred) or, when too little of it is
// supported to show, the decision to replace it with the extractive
// answer.
func (r *Runner) settle(gate *groundingGate, packing Packing, shown *strings.Builder, st *turnState) (replace bool, err error) {
	if gate.checkErr != nil {
		if gate.policy != GroundingAnnotate {
			return false, gate.checkErr // nothing unchecked may be shown
		}
		// The answer has streamed: a failed check costs its report.
		if r.Logger != nil {
			r.Logger.Warn("grounding check failed", "error", gate.checkErr)
		}
	}
	st.groundedRatio, st.withheld = gate.groundedRatio(), gate.withheld
	if ratio := st.groundedRatio; ratio != nil {
		reason := ""
		switch {
		case gate.policy == GroundingFallback && *ratio < r.Grounding.fallbackBelow():
			reason = replacedBelowRatio
		case gate.policy == GroundingStrip && !gate.shownText:
			reason = replacedAllWithheld
		}
		if reason != "" {
			st.replaced = true
			st.emit(Event{Type: EventAnswerReplaced, Data: AnswerReplaced{GroundedRatio: *ratio, Reason: reason}})
			return true, nil
		}
	}
	if err := gate.release(); err != nil {
		return false, err
	}
	r.emitCitations(shown.String(), packing.Packed, st)
	inferCitations(gate.checked, shown.String(), packing.Packed, st)
	return false, nil
}

// inferCitations cites, for each supported sentence the model left
// unmarked, the fragment that supports it, unless the answer cites it.
func inferCitations(checked []Grounding, shown string, packed []retrieval.Fragment, st *turnState) {
	cited := map[string]bool{}
	for _, m := range markerPattern.FindAllStringSubmatch(shown, -1) {
		cited[m[1]] = true
	}
	byMarker := map[string]retrieval.Fragment{}
	for _, f := range packed {
		byMarker[f.Marker] = f
	}
	for _, g := range checked {
		f, ok := byMarker[g.Marker]
		if g.Status != GroundingSupported || g.Withheld || !ok || cited[g.Marker] || markerPattern.MatchString(g.Sentence) {
			continue
		}
		cited[g.Marker] = true
		st.emit(Event{Type: EventCitation, Data: Citation{Marker: f.Marker, Title: f.Title, SourceURI: f.SourceURI,
			Heading: f.HeadingPath, Inferred: true}})
	}
}
