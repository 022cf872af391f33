package route

import (
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
)

// settle ends a checked answer: the grounding summary, then either the
// citations (written, then inferred) or, when the policy does not let it
// stand, the decision to replace it with the extractive answer.
func (r *Runner) settle(gate *answer.Gate, packing Packing, shown string, st *turnState) (replace bool, err error) {
	if err := gate.CheckErr(); err != nil {
		if gate.Policy() != podconfig.GroundingAnnotate {
			return false, &ToolError{Tool: "grounding", Err: err} // nothing unchecked may be shown
		}
		// The answer has streamed: a failed check costs its report.
		if r.Logger != nil {
			r.Logger.Warn("grounding check failed", "error", err)
		}
	}
	st.groundedRatio, st.withheld, st.unchecked = gate.GroundedRatio(), gate.Withheld(), gate.Unchecked()
	if reason := gate.Replacement(); reason != "" {
		st.replaced = true
		st.emit(Event{Type: EventAnswerReplaced, Data: AnswerReplaced{GroundedRatio: *st.groundedRatio, Reason: reason}})
		return true, nil
	}
	if err := gate.Release(); err != nil {
		return false, err
	}
	emitCitations(answer.Cited(shown, packing.Packed), false, st)
	emitCitations(answer.Inferred(gate.Checked(), shown, packing.Packed), true, st)
	return false, nil
}
