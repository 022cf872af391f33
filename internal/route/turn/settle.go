package turn

import (
	"strings"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
)

// settle ends a checked answer: the grounding summary, then either the
// citations (written, then inferred) or, when the policy does not let it
// stand, the decision to replace it with the extractive answer. shown is
// the answer as the client reads it, read once the gate has released
// what it held (strip and fallback hold the whole answer until then).
func (t *turn) settle(gate *answer.Gate, packing Packing, shown *strings.Builder) (replace bool, err error) {
	if err := gate.CheckErr(); err != nil {
		if gate.Policy() != podconfig.GroundingAnnotate {
			return false, &DependencyError{Dependency: DependencyGroundingCheck, Err: err} // nothing unchecked may be shown
		}
		// The answer has streamed: a failed check costs its report.
		if t.engine.Logger != nil {
			t.engine.Logger.Warn("grounding check failed", "error", err)
		}
	}
	checks := &t.state.checks
	checks.GroundedRatio, checks.Withheld, checks.GroundingUnchecked = gate.GroundedRatio(), gate.Withheld(), gate.Unchecked()
	if reason := gate.Replacement(); reason != "" {
		checks.AnswerReplaced = true
		t.emit(AnswerReplaced{GroundedRatio: *checks.GroundedRatio, Reason: reason})
		return true, nil
	}
	if err := gate.Release(); err != nil {
		return false, err
	}
	t.emitCitations(answer.Cited(shown.String(), packing.Packed), false)
	t.emitCitations(answer.Inferred(gate.Checked(), shown.String(), packing.Packed), true)
	return false, nil
}
