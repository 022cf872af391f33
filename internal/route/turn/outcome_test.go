package turn_test

import (
	"slices"
	"testing"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// An agentic turn folds into its answer, the answer's own sources (round
// 0, not the harness's searches), the research step by step, and how it
// ended.
func TestOutcomeFoldsATurn(t *testing.T) {
	var o turn.Outcome
	for _, p := range []turn.Payload{
		turn.Started{TurnID: "t1", Mode: "agentic"},
		turn.RoundStarted{Round: 1},
		turn.ToolCall{Name: "search", Query: "waves", Round: 1, Status: turn.CallAccepted},
		turn.RetrievalReport{Round: 1, Query: "waves", Sources: []turn.RetrievalSource{{Marker: "F1"}}},
		turn.MemorySaved{Round: 1},
		turn.FinalizeForced{Round: 1, Reason: "rounds spent"},
		turn.RetrievalReport{Query: "waves", Sources: []turn.RetrievalSource{{Marker: "S1"}, {Marker: "S2"}}},
		turn.Delta{Text: "Lower waves "},
		turn.Delta{Text: "go first [S1]."},
		turn.Grounding{Sentence: "Lower waves go first.", Status: "supported"},
		turn.Citation{Marker: "S1"},
		turn.Completed{Rounds: 1},
	} {
		o.Add(turn.NewEvent(p))
	}
	if o.Started.TurnID != "t1" || o.Answer() != "Lower waves go first [S1]." || o.Rounds != 1 || !o.Forced {
		t.Errorf("fold: started %+v, answer %q, rounds %d, forced %v", o.Started, o.Answer(), o.Rounds, o.Forced)
	}
	var markers []string
	for _, s := range o.Sources() {
		markers = append(markers, s.Marker)
	}
	if !slices.Equal(markers, []string{"S1", "S2"}) {
		t.Errorf("the answer's sources %v, want S1 S2: the harness's F1 is research, not the answer's", markers)
	}
	var steps []string
	for _, ev := range o.Harness {
		steps = append(steps, ev.Type)
	}
	if want := []string{"round.started", "tool.call", "retrieval", "memory.saved", "finalize.forced"}; !slices.Equal(steps, want) {
		t.Errorf("harness steps %v, want %v", steps, want)
	}
	if len(o.Groundings) != 1 || len(o.Citations) != 1 || o.Completed == nil || o.Failed != nil {
		t.Errorf("groundings %v, citations %v, completed %v, failed %v", o.Groundings, o.Citations, o.Completed, o.Failed)
	}
}

// A failed turn's outcome says so, with the answer read before it.
func TestOutcomeOfAFailedTurn(t *testing.T) {
	var o turn.Outcome
	o.Add(turn.NewEvent(turn.Delta{Text: "Partly"}))
	o.Add(turn.NewEvent(turn.Failed{Code: turn.CodeModelUnavailable}))
	if o.Failed == nil || o.Failed.Code != turn.CodeModelUnavailable || o.Completed != nil || o.Answer() != "Partly" {
		t.Errorf("failed turn folded as %+v", o)
	}
}
