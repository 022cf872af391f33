package turn_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// Every payload reads back as the type it was written from, so a turn's
// events are the same values in the process, from a shared turn log and
// from a client's stream.
func TestEveryPayloadReadsBackAsItsOwnType(t *testing.T) {
	ratio := 0.5
	payloads := []turn.Payload{
		turn.Started{TurnID: "t1", Mode: "agentic"},
		turn.ToolCall{Name: "search", Query: "waves", Round: 1, Status: turn.CallAccepted},
		turn.Research{Queries: []string{"waves"}, Rephrase: "sync waves", Found: 2},
		turn.AnswerabilityReport{Check: "coverage", Score: 0.25, Threshold: 0.5, Coverage: 0.25, Missing: []string{"velero"},
			MissingNames: []string{"velero"}, Relevance: &ratio, Refused: []string{"coverage", "names"}, CalibratedBy: "RouteEvaluation dev"},
		turn.ModelRefused{Override: "askAgain", Again: true},
		turn.RetrievalReport{Query: "waves", Intent: "concept", Sources: []turn.RetrievalSource{{Marker: "S1", Score: 0.8}}},
		turn.Delta{Text: "Waves [S1]."},
		turn.Citation{Marker: "S1", Title: "Waves"},
		turn.Grounding{Sentence: "Waves.", Status: "supported", Marker: "S1", Score: 0.9},
		turn.AnswerReplaced{GroundedRatio: 0.2, Reason: "below fallbackBelow"},
		turn.RoundStarted{Round: 2},
		turn.MemorySaved{Round: 1, Fragments: []turn.SavedFragment{{ID: "F1"}}, Closed: []string{}, Open: []string{"order"}},
		turn.Finalized{Round: 2, Fragments: []string{"F1"}},
		turn.FinalizeForced{Round: 3, Fragments: []string{"F1"}, Reason: "rounds spent"},
		turn.Completed{Timings: map[string]int64{"total": 12}, AnswerChecks: turn.AnswerChecks{GroundedRatio: &ratio, HistoryTrimmed: 2}},
		turn.Failed{Code: turn.CodeTimeout, Message: "The turn ran past its time limit."},
		turn.Unknown{Type: "some.future.event", Raw: json.RawMessage(`{"new":true}`)},
	}
	seen := map[string]bool{}
	for i, p := range payloads {
		ev := turn.NewEvent(p)
		ev.ID = int64(i + 1)
		if seen[ev.Type] {
			t.Errorf("%T names %s, as another payload does", p, ev.Type)
		}
		seen[ev.Type] = true
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var back turn.Event
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if !reflect.DeepEqual(back, ev) {
			t.Errorf("%s read back as %#v, want %#v", data, back, ev)
		}
	}
}

// A payload that does not fit its event's type is an error that names
// the event, not a zero value.
func TestAPayloadThatDoesNotFitItsTypeIsRefused(t *testing.T) {
	var ev turn.Event
	err := json.Unmarshal([]byte(`{"id":3,"type":"delta","data":{"text":7}}`), &ev)
	if err == nil || !strings.Contains(err.Error(), "event 3 (delta)") {
		t.Fatalf("got %v, want an error naming event 3 (delta)", err)
	}
}
