package lab

import (
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// The answerability curve reads every threshold's not-found rates off
// one run: below a turn's score the check refuses; above it the turn
// keeps what the model said (its own not found included), and a turn
// the route's threshold refused counts as answered.
func TestAnswerabilityCurveReadsEachThresholdOffOneRun(t *testing.T) {
	gold := "a.md"
	answerable := eval.Question{ID: "a", GoldFile: &gold, GoldHeading: []string{"A"}}
	unanswerable := eval.Question{ID: "u"}
	checked := func(score float64, modelNotFound bool) eval.TurnOutcome {
		return eval.TurnOutcome{Answerability: &turn.AnswerabilityReport{Check: "coverage", Score: score, Threshold: 0.5, Answerable: score >= 0.5},
			Completed: &turn.Completed{NotFound: modelNotFound}}
	}
	questions := []eval.Question{answerable, answerable, unanswerable, unanswerable}
	outcomes := []eval.TurnOutcome{
		checked(0.9, false), // answered at every threshold below 0.9
		checked(0.6, true),  // the model itself said not found
		checked(0.3, false), // refused by the route at 0.5: counted answered above 0.3
		checked(0.7, false),
	}
	c := answerabilityCurve("generative", outcomes, questions)
	if c == nil || c.Asked != 4 || c.Check != "coverage" {
		t.Fatalf("curve %+v", c)
	}
	at := map[float64]CurvePoint{}
	for _, p := range c.Points {
		at[p.Threshold] = p
	}
	for threshold, want := range map[float64]CurvePoint{
		0.25: {NotFound: 0, AnswerableDropped: 0.5},
		0.35: {NotFound: 0.5, AnswerableDropped: 0.5},
		0.75: {NotFound: 1, AnswerableDropped: 0.5},
		0.95: {NotFound: 1, AnswerableDropped: 1},
	} {
		got := at[threshold]
		if got.NotFound != want.NotFound || got.AnswerableDropped != want.AnswerableDropped {
			t.Errorf("at %.2f: not found %.2f, answerable refused %.2f; want %.2f, %.2f", threshold, got.NotFound, got.AnswerableDropped, want.NotFound, want.AnswerableDropped)
		}
	}
	if answerabilityCurve("generative", []eval.TurnOutcome{{Completed: &turn.Completed{}}}, questions[:1]) != nil {
		t.Error("a run where no turn ran the check has a curve")
	}
}

// When the model alone refuses more answerable questions than the bound,
// the text says no threshold meets it rather than offering one.
func TestAnswerabilityTextSaysWhenNoThresholdMeetsTheBound(t *testing.T) {
	gold := "a.md"
	answerable := eval.Question{ID: "a", GoldFile: &gold, GoldHeading: []string{"A"}}
	turn := func(score float64, modelNotFound bool) eval.TurnOutcome {
		return eval.TurnOutcome{Answerability: &turn.AnswerabilityReport{Check: "coverage", Score: score, Threshold: 0.5, Answerable: true},
			Completed: &turn.Completed{NotFound: modelNotFound}}
	}
	c := answerabilityCurve("generative", []eval.TurnOutcome{turn(0.9, true), turn(0.9, false), turn(0.6, false)},
		[]eval.Question{answerable, answerable, {ID: "u"}})
	if text := answerabilityText(*c); !strings.Contains(text, "no threshold keeps the answerable refused within 0.05: the model itself said not found for 0.50 of them") {
		t.Errorf("text:\n%s", text)
	}
}
