package lab

import (
	"math"
	"testing"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// The rules replay each signal a turn reported: names refuses the
// questions whose names nothing packed held, and a rule that lets a turn
// through leaves it its own outcome.
func TestAnswerabilityRulesReplayTheReportedSignals(t *testing.T) {
	gold := "a.md"
	answerable := eval.Question{ID: "a", GoldFile: &gold, GoldHeading: []string{"A"}}
	reported := func(coverage float64, missing []string, modelNotFound bool) eval.TurnOutcome {
		return eval.TurnOutcome{Answerability: &turn.AnswerabilityReport{Coverage: coverage, MissingNames: missing, Answerable: true},
			Completed: &turn.Completed{NotFound: modelNotFound}}
	}
	questions := []eval.Question{answerable, answerable, {ID: "u1"}, {ID: "u2"}}
	outcomes := []eval.TurnOutcome{
		reported(0.9, nil, false),
		reported(0.8, nil, false),
		reported(0.9, []string{"velero"}, false),
		reported(0.3, nil, false),
	}
	figures := map[string]RuleFigures{}
	for _, f := range answerabilityRuleFigures(outcomes, questions) {
		figures[f.Rule] = f
	}
	if f := figures["names"]; f.Rates.NotFound != 0.5 || f.Rates.AnswerableDropped != 0 {
		t.Errorf("names: %+v", f.Rates)
	}
	if f := figures["names or coverage"]; f.Rates.NotFound != 1 || f.Rates.AnswerableDropped != 0 {
		t.Errorf("names or coverage: %+v (fit %s)", f.Rates, f.Whole)
	}
	if f := figures["coverage"]; !f.WithinBound {
		t.Errorf("coverage: no threshold within the bound: %+v", f)
	}
	// A turn a rule lets through keeps the model's own not-found; then no
	// rule is within the bound, and the fit says so.
	outcomes[1].Completed.NotFound = true
	if f := answerabilityRuleFigures(outcomes, questions)[0]; f.Rates.AnswerableDropped != 0.5 || f.WithinBound {
		t.Errorf("the model's not-found is not counted: %+v", f)
	}
	if answerabilityRuleFigures([]eval.TurnOutcome{{Completed: &turn.Completed{}}}, questions[:1]) != nil {
		t.Error("rules replayed without a report")
	}
}

func TestWilsonInterval(t *testing.T) {
	// 24 of 37: 0.649, Wilson 0.487–0.783.
	got := wilson(24.0/37, 37)
	if math.Abs(got[0]-0.487) > 0.002 || math.Abs(got[1]-0.783) > 0.002 {
		t.Errorf("interval %v", got)
	}
	if got := wilson(0, 65); got[0] > 1e-12 || math.Abs(got[1]-0.0557) > 0.001 {
		t.Errorf("interval of 0 of 65: %v", got)
	}
}
