package turnstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/server"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/route/turnstream"
)

// aTurn is one event of every payload type a turn emits, as a turn's
// log holds them; its IDs are the log's (1, 2, …).
func aTurn() []turn.Event {
	ratio := 0.75
	return []turn.Event{
		{Type: turn.EventTurnStarted, Data: turn.Started{TurnID: "t1", Mode: "agentic"}},
		{Type: turn.EventRoundStarted, Data: turn.RoundStarted{Round: 1}},
		{Type: turn.EventToolCall, Data: turn.ToolCall{Name: "search", Query: "sync waves", Round: 1, Status: turn.CallAccepted}},
		{Type: turn.EventRetrieval, Data: turn.RetrievalReport{Round: 1, Query: "sync waves", Intent: "concept",
			Sources: []turn.RetrievalSource{{Marker: "F1", Title: "Waves", HeadingPath: []string{"Waves", "Order"}, SourceURI: "docs/waves.md", Score: 0.8, Kind: "section"}}}},
		{Type: turn.EventMemorySaved, Data: turn.MemorySaved{Round: 1, Fragments: []turn.SavedFragment{{ID: "F1", Note: "the order"}}, Closed: []string{"order"}, Open: []string{}}},
		{Type: turn.EventFinalizeForced, Data: turn.FinalizeForced{Round: 2, Fragments: []string{"F1"}, Reason: "rounds spent"}},
		{Type: turn.EventResearch, Data: turn.Research{Queries: []string{"waves"}, Rephrase: "sync wave order", Found: 1}},
		{Type: turn.EventAnswerability, Data: turn.AnswerabilityReport{Check: "coverage", Score: 0.25, Threshold: 0.5, Missing: []string{"velero"}}},
		{Type: turn.EventDelta, Data: turn.Delta{Text: "Lower waves go first [S1].\nThen"}},
		{Type: turn.EventGrounding, Data: turn.Grounding{Sentence: "Lower waves go first.", Status: "supported", Marker: "S1", Score: 0.9}},
		{Type: turn.EventAnswerReplaced, Data: turn.AnswerReplaced{GroundedRatio: 0.2, Reason: "below fallbackBelow"}},
		{Type: turn.EventCitation, Data: turn.Citation{Marker: "S1", Title: "Waves", SourceURI: "docs/waves.md", Heading: []string{"Waves"}}},
		{Type: "some.future.event", Data: turn.Unknown{Type: "some.future.event", Raw: json.RawMessage(`{"new":true}`)}},
		{Type: turn.EventTurnCompleted, Data: turn.Completed{NotFound: false, Timings: map[string]int64{"total": 12}, Rounds: 2, AnswerChecks: turn.AnswerChecks{GroundedRatio: &ratio}}},
	}
}

// serveTurn serves events as the route's API does, from its turn log,
// for the user ann.
func serveTurn(t *testing.T, events []turn.Event) (url string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := turnlog.NewMemory(time.Minute, 10, 0, time.Now)
	if err := log.Start(ctx, "t1", "ann"); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if err := log.Append(ctx, "t1", ev); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(server.New(ctx, server.Options{Log: log, Limits: server.DefaultLimits(),
		Auth:  identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"},
		Ready: func(context.Context) error { return nil }}).Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/v1/turns/t1/events"
}

func get(t *testing.T, url string, lastEventID int64) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("X-User", "ann")
	if lastEventID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastEventID, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return resp
}

// What the API streams reads back as the events the turn emitted, each
// payload as its own type, with the IDs a client resumes from; a client
// that reconnects with Last-Event-ID reads the rest.
func TestReadDecodesTheStreamTheAPIWrites(t *testing.T) {
	want := aTurn()
	for i := range want {
		want[i].ID = int64(i + 1)
	}
	url := serveTurn(t, aTurn())

	var got []turn.Event
	if err := turnstream.Read(get(t, url, 0).Body, func(ev turn.Event) error { got = append(got, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read\n%#v\nwant\n%#v", got, want)
	}

	var rest []turn.Event
	if err := turnstream.Read(get(t, url, 5).Body, func(ev turn.Event) error { rest = append(rest, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rest, want[5:]) {
		t.Errorf("resumed after 5:\n%#v\nwant\n%#v", rest, want[5:])
	}
}

// Read stops at the final event: an error event ends the turn as
// turn.completed does, whatever follows.
func TestReadStopsAtTheErrorEvent(t *testing.T) {
	stream := "id: 1\nevent: turn.started\ndata: {\"turn_id\":\"t1\",\"mode\":\"generative\"}\n\n" +
		": keep-alive\n\n" +
		"id: 2\nevent: error\ndata: {\"code\":\"model_unavailable\",\"message\":\"the chat model is unavailable\"}\n\n" +
		"id: 3\nevent: delta\ndata: {\"text\":\"never read\"}\n\n"
	var got []turn.Event
	if err := turnstream.Read(strings.NewReader(stream), func(ev turn.Event) error { got = append(got, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	want := turn.Event{ID: 2, Type: turn.EventError, Data: turn.Failed{Code: "model_unavailable", Message: "the chat model is unavailable"}}
	if len(got) != 2 || !reflect.DeepEqual(got[1], want) {
		t.Errorf("read %#v, want turn.started then %#v", got, want)
	}
}

// A stream cut before its final event is not a turn that ended: the
// caller learns so, with the events it did get, and can resume after the
// last ID; a payload that does not decode names its event.
func TestReadRefusesACutOrBadStream(t *testing.T) {
	cut := "id: 1\nevent: turn.started\ndata: {\"turn_id\":\"t1\"}\n\nid: 2\nevent: delta\ndata: {\"text\":\"Lower"
	var last int64
	err := turnstream.Read(strings.NewReader(cut), func(ev turn.Event) error { last = ev.ID; return nil })
	if !errors.Is(err, turnstream.ErrEndedEarly) || last != 1 {
		t.Errorf("cut stream: err %v after event %d, want ErrEndedEarly after 1", err, last)
	}

	bad := "id: 7\nevent: turn.completed\ndata: {\"not_found\":\"yes\"}\n\n"
	err = turnstream.Read(strings.NewReader(bad), func(turn.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "event 7 (turn.completed)") {
		t.Errorf("bad payload: %v, want an error naming event 7 (turn.completed)", err)
	}

	stop := errors.New("enough")
	err = turnstream.Read(get(t, serveTurn(t, aTurn()), 0).Body, func(turn.Event) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("the callback's error: got %v", err)
	}
}
