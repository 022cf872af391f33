package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// answerTurn submits a question as user and reads its stream to the end.
func answerTurn(t *testing.T, srv *httptest.Server, user, question string) string {
	t.Helper()
	turnID := submit(t, srv, user, question)
	resp := do(t, "GET", srv.URL+"/v1/turns/"+turnID+"/events", user, "")
	events := readSSE(t, resp.Body, 1000)
	resp.Body.Close()
	if len(events) == 0 || events[len(events)-1].typ != turn.EventTurnCompleted {
		t.Fatalf("turn %s: stream %+v", turnID, events)
	}
	return turnID
}

// postVerdict posts a verdict as user and returns the status and body.
func postVerdict(t *testing.T, srv *httptest.Server, turnID, user, body string) (int, string) {
	t.Helper()
	resp := do(t, "POST", srv.URL+"/v1/turns/"+turnID+"/feedback", user, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// feedbackServers serve the world's route with feedback in memory or in
// Redis; each, given the subtest's t, returns the server and its store.
func feedbackServers() map[string]func(*testing.T, *routetest.World) (*httptest.Server, turnlog.Feedback) {
	return map[string]func(*testing.T, *routetest.World) (*httptest.Server, turnlog.Feedback){
		"memory": func(t *testing.T, w *routetest.World) (*httptest.Server, turnlog.Feedback) {
			store := turnlog.NewMemoryFeedback(time.Minute, time.Hour, 0, time.Now)
			return serveWith(t, w, func(o *Options) { o.Feedback = store; o.ModelID = "handbook" }), store
		},
		"redis": func(t *testing.T, w *routetest.World) (*httptest.Server, turnlog.Feedback) {
			client := redis.NewClient(&redis.Options{Addr: routetest.Redis.Get(t).Addr})
			t.Cleanup(func() { _ = client.Close() })
			store := turnlog.NewRedisFeedback(client, sealtest.New(t), "t:"+strconv.FormatInt(time.Now().UnixNano(), 10)+":", time.Minute, time.Hour, time.Now)
			return serveWith(t, w, func(o *Options) { o.Feedback = store; o.ModelID = "handbook" }), store
		},
	}
}

// Only the user who asked may rate a turn; to anyone else (another user,
// a name that differs in case only or extends it) the turn does not exist:
// the answer is the same, byte for byte, as for a turn that never was. The last verdict
// wins, kept with the turn's question, answer and citations, and counted.
func TestFeedbackIsTheOwnersAndTheLastWins(t *testing.T) {
	for name, start := range feedbackServers() {
		t.Run(name, func(t *testing.T) {
			w := routetest.NewWorld(t)
			w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
			srv, store := start(t, w)
			turnID := answerTurn(t, srv, "ann", "How are sync waves ordered?")

			unknownStatus, unknownBody := postVerdict(t, srv, "0123456789abcdef0123456789abcdef", "bob", `{"rating":"down"}`)
			if unknownStatus != http.StatusNotFound || !strings.Contains(unknownBody, `"turn_not_found"`) {
				t.Fatalf("unknown turn: %d %s", unknownStatus, unknownBody)
			}
			for _, other := range []string{"bob", "Ann", "annie"} {
				status, body := postVerdict(t, srv, turnID, other, `{"rating":"down"}`)
				if want := strings.ReplaceAll(unknownBody, "0123456789abcdef0123456789abcdef", turnID); status != unknownStatus || body != want {
					t.Errorf("%q rates ann's turn: %d %s, want the unknown turn's answer %s", other, status, body, want)
				}
			}

			if status, body := postVerdict(t, srv, turnID, "ann", `{"rating":"up"}`); status != http.StatusNoContent {
				t.Fatalf("ann rates up: %d %s", status, body)
			}
			if status, body := postVerdict(t, srv, turnID, "ann", `{"rating":"down","comment":"Waves are not mentioned.","expected_source":"docs/sync.md"}`); status != http.StatusNoContent {
				t.Fatalf("ann rates down: %d %s", status, body)
			}
			verdicts, err := store.Verdicts(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(verdicts) != 1 {
				t.Fatalf("verdicts %+v: want one, the last", verdicts)
			}
			v := verdicts[0]
			if v.Verdict.Rating != "down" || v.Verdict.Comment != "Waves are not mentioned." || v.Verdict.ExpectedSource != "docs/sync.md" ||
				v.Turn.Question != "How are sync waves ordered?" || v.Turn.Answer != "Lower waves go first [S1]." ||
				len(v.Turn.Citations) == 0 || len(v.Turn.Fragments) == 0 || v.Turn.Owner != "ann" {
				t.Errorf("verdict %+v", v)
			}
			metrics := scrape(t, srv)
			for _, line := range []string{`ragroute_feedback_total{rating="down",route="handbook"} 1`, `ragroute_feedback_total{rating="up",route="handbook"} 1`} {
				if !strings.Contains(metrics, line) {
					t.Errorf("metrics lack %s", line)
				}
			}
		})
	}
}

// scrape reads the server's /metrics.
func scrape(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	resp := do(t, "GET", srv.URL+"/metrics", "", "")
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

// A verdict out of shape is refused naming the field at fault, and
// nothing is stored.
func TestBadFeedbackIsRefusedNamingTheField(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	store := turnlog.NewMemoryFeedback(time.Minute, time.Hour, 0, time.Now)
	srv := serveWith(t, w, func(o *Options) { o.Feedback = store })
	turnID := answerTurn(t, srv, "ann", "How are sync waves ordered?")
	for _, c := range []struct{ body, code, param string }{
		{`{"rating":"meh"}`, "bad_feedback", "rating"},
		{`{}`, "bad_feedback", "rating"},
		{`{"rating":"up","invented":true}`, "bad_feedback", "invented"},
		{`{"rating":"down","comment":"` + strings.Repeat("x", MaxFeedbackCommentBytes+1) + `"}`, "bad_feedback", "comment"},
		{`{"rating":"down","expected_source":"` + strings.Repeat("x", MaxExpectedSourceBytes+1) + `"}`, "bad_feedback", "expected_source"},
		{`{"rating":"down","stars":5}`, "bad_json", ""},
	} {
		status, body := postVerdict(t, srv, turnID, "ann", c.body)
		if status != http.StatusBadRequest || !strings.Contains(body, `"code":"`+c.code+`"`) || (c.param != "" && !strings.Contains(body, `"param":"`+c.param+`"`)) {
			t.Errorf("%.60s: %d %s, want 400 %s naming %q", c.body, status, body, c.code, c.param)
		}
	}
	// At the limit it is taken.
	if status, body := postVerdict(t, srv, turnID, "ann", `{"rating":"down","comment":"`+strings.Repeat("x", MaxFeedbackCommentBytes)+`"}`); status != http.StatusNoContent {
		t.Errorf("a comment at the limit: %d %s", status, body)
	}
	if verdicts, _ := store.Verdicts(context.Background()); len(verdicts) != 1 {
		t.Errorf("%d verdicts, want the one taken", len(verdicts))
	}
}

// A turn can be rated until the route's turn retention passes, then it
// is not found.
func TestFeedbackOnAnExpiredTurnIsRefused(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	clock := newTestClock()
	store := turnlog.NewMemoryFeedback(10*time.Minute, time.Hour, 0, clock.now)
	srv := serveWith(t, w, func(o *Options) { o.Feedback = store })
	turnID := answerTurn(t, srv, "ann", "How are sync waves ordered?")
	clock.advance(11 * time.Minute)
	if status, body := postVerdict(t, srv, turnID, "ann", `{"rating":"down"}`); status != http.StatusNotFound || !strings.Contains(body, "turn_not_found") {
		t.Errorf("an expired turn: %d %s, want 404 turn_not_found", status, body)
	}
}

// With feedback off (spec.feedback.enabled: false), rating answers 404
// feedback_disabled and the facade still names its turns.
func TestFeedbackOffIsRefused(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	srv := serve(t, w)
	turnID := answerTurn(t, srv, "ann", "How are sync waves ordered?")
	if status, body := postVerdict(t, srv, turnID, "ann", `{"rating":"down"}`); status != http.StatusNotFound || !strings.Contains(body, "feedback_disabled") {
		t.Errorf("feedback off: %d %s, want 404 feedback_disabled", status, body)
	}
}

// The OpenAI facade's responses, whole or streamed, name their turn in
// X-Ragroute-Turn-Id, and a facade client rates the answer with it.
func TestFacadeClientsRateByTheTurnHeader(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	store := turnlog.NewMemoryFeedback(time.Minute, time.Hour, 0, time.Now)
	srv := serveWith(t, w, func(o *Options) { o.Feedback = store })
	for _, stream := range []bool{false, true} {
		resp := do(t, "POST", srv.URL+"/v1/chat/completions", "ann",
			`{"stream":`+strconv.FormatBool(stream)+`,"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		turnID := resp.Header.Get("X-Ragroute-Turn-Id")
		if resp.StatusCode != http.StatusOK || turnID == "" {
			t.Fatalf("stream %v: %d, turn header %q", stream, resp.StatusCode, turnID)
		}
		if status, body := postVerdict(t, srv, turnID, "ann", `{"rating":"down","invented":true}`); status != http.StatusNoContent {
			t.Errorf("stream %v: rating the facade's turn: %d %s", stream, status, body)
		}
	}
	verdicts, _ := store.Verdicts(context.Background())
	if len(verdicts) != 2 || !verdicts[0].Verdict.Invented || verdicts[1].Turn.Answer != "Lower waves go first [S1]." {
		t.Errorf("verdicts %+v", verdicts)
	}
}

// A verdict joins the turn's trace: a ragroute.feedback span in the
// turn's trace with a turn.rated event naming the rating, never the
// comment.
func TestAVerdictJoinsTheTurnsTrace(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	recorder := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	store := turnlog.NewMemoryFeedback(time.Minute, time.Hour, 0, time.Now)
	srv := serveWith(t, w, func(o *Options) { o.Feedback = store; o.Tracing = provider })
	turnID := answerTurn(t, srv, "ann", "How are sync waves ordered?")
	if status, body := postVerdict(t, srv, turnID, "ann", `{"rating":"down","comment":"private words"}`); status != http.StatusNoContent {
		t.Fatalf("rate: %d %s", status, body)
	}
	var turnTrace, verdictTrace string
	var event sdktrace.Event
	for _, s := range recorder.Started() { // the turn's span may end after its last event is read
		if s.Name() == "ragroute.turn" {
			turnTrace = s.SpanContext().TraceID().String()
		}
	}
	for _, s := range recorder.Ended() {
		if s.Name() == "ragroute.feedback" {
			verdictTrace = s.SpanContext().TraceID().String()
			if len(s.Events()) == 1 {
				event = s.Events()[0]
			}
		}
	}
	if turnTrace == "" || verdictTrace != turnTrace {
		t.Fatalf("the verdict's span is in trace %q, the turn's in %q", verdictTrace, turnTrace)
	}
	attrs := map[string]string{}
	for _, a := range event.Attributes {
		attrs[string(a.Key)] = a.Value.String()
	}
	if event.Name != "turn.rated" || attrs["rating"] != "down" || attrs["comment_bytes"] != "13" {
		t.Errorf("event %s %v, want turn.rated with rating down and the comment's size", event.Name, attrs)
	}
	for _, v := range attrs {
		if strings.Contains(v, "private") {
			t.Errorf("the trace carries the comment: %v", attrs)
		}
	}
}
