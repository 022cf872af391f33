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

	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/api"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/route/turnstream"
)

// aTurn is one event of every payload type the Runner emits, as a turn's
// log holds them; its IDs are the log's (1, 2, …).
func aTurn() []route.Event {
	ratio := 0.75
	return []route.Event{
		{Type: route.EventTurnStarted, Data: route.TurnStarted{TurnID: "t1", Mode: "agentic"}},
		{Type: route.EventRoundStarted, Data: route.RoundStarted{Round: 1}},
		{Type: route.EventToolCall, Data: route.ToolCall{Name: "search", Query: "sync waves", Round: 1, Status: route.CallAccepted}},
		{Type: route.EventRetrieval, Data: route.RetrievalReport{Round: 1, Query: "sync waves", Intent: "concept",
			Sources: []route.RetrievalSource{{Marker: "F1", Title: "Waves", HeadingPath: []string{"Waves", "Order"}, SourceURI: "docs/waves.md", Score: 0.8, Kind: "section"}}}},
		{Type: route.EventMemorySaved, Data: route.MemorySaved{Round: 1, Fragments: []route.SavedFragment{{ID: "F1", Note: "the order"}}, Closed: []string{"order"}, Open: []string{}}},
		{Type: route.EventFinalizeForced, Data: route.Finalized{Round: 2, Fragments: []string{"F1"}, Reason: "rounds spent"}},
		{Type: route.EventResearch, Data: route.Research{Queries: []string{"waves"}, Rephrase: "sync wave order", Found: 1}},
		{Type: route.EventAnswerability, Data: route.AnswerabilityReport{Check: "coverage", Score: 0.25, Threshold: 0.5, Missing: []string{"velero"}}},
		{Type: route.EventDelta, Data: route.Delta{Text: "Lower waves go first [S1].\nThen"}},
		{Type: route.EventGrounding, Data: answer.Grounding{Sentence: "Lower waves go first.", Status: "supported", Marker: "S1", Score: 0.9}},
		{Type: route.EventAnswerReplaced, Data: route.AnswerReplaced{GroundedRatio: 0.2, Reason: "below fallbackBelow"}},
		{Type: route.EventCitation, Data: route.Citation{Marker: "S1", Title: "Waves", SourceURI: "docs/waves.md", Heading: []string{"Waves"}}},
		{Type: "some.future.event", Data: json.RawMessage(`{"new":true}`)},
		{Type: route.EventTurnCompleted, Data: route.TurnCompleted{NotFound: false, GroundedRatio: &ratio, Timings: map[string]int64{"total": 12}, Rounds: 2}},
	}
}

// serveTurn serves events as the route's API does, from its turn log,
// for the user ann.
func serveTurn(t *testing.T, events []route.Event) (url string) {
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
	srv := httptest.NewServer(api.New(ctx, api.Options{Log: log, Limits: api.DefaultLimits(),
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

// What the API streams reads back as the events the Runner emitted, each
// payload as its own type, with the IDs a client resumes from; a client
// that reconnects with Last-Event-ID reads the rest.
func TestReadDecodesTheStreamTheAPIWrites(t *testing.T) {
	want := aTurn()
	for i := range want {
		want[i].ID = int64(i + 1)
	}
	url := serveTurn(t, aTurn())

	var got []route.Event
	if err := turnstream.Read(get(t, url, 0).Body, func(ev route.Event) error { got = append(got, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read\n%#v\nwant\n%#v", got, want)
	}

	var rest []route.Event
	if err := turnstream.Read(get(t, url, 5).Body, func(ev route.Event) error { rest = append(rest, ev); return nil }); err != nil {
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
	var got []route.Event
	if err := turnstream.Read(strings.NewReader(stream), func(ev route.Event) error { got = append(got, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	want := route.Event{ID: 2, Type: route.EventError, Data: route.TurnError{Code: "model_unavailable", Message: "the chat model is unavailable"}}
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
	err := turnstream.Read(strings.NewReader(cut), func(ev route.Event) error { last = ev.ID; return nil })
	if !errors.Is(err, turnstream.ErrEndedEarly) || last != 1 {
		t.Errorf("cut stream: err %v after event %d, want ErrEndedEarly after 1", err, last)
	}

	bad := "id: 7\nevent: turn.completed\ndata: {\"not_found\":\"yes\"}\n\n"
	err = turnstream.Read(strings.NewReader(bad), func(route.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "event 7 (turn.completed)") {
		t.Errorf("bad payload: %v, want an error naming event 7 (turn.completed)", err)
	}

	stop := errors.New("enough")
	err = turnstream.Read(get(t, serveTurn(t, aTurn()), 0).Body, func(route.Event) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("the callback's error: got %v", err)
	}
}
