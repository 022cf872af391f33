package turn_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// Fast tests of the turn: an in-memory index and an in-process scripted
// model, no Milvus, no HTTP. The Milvus-backed tests in turn_test.go
// assert the same behaviour end to end.

var staff = []string{"user:ann", "group:staff", "public"}

const notFound = "I could not find this in ACME's documentation."

func completed(t *testing.T, events []turn.Event) turn.Completed {
	t.Helper()
	if len(events) == 0 || events[0].Type != turn.EventTurnStarted || events[len(events)-1].Type != turn.EventTurnCompleted {
		t.Fatalf("events %+v", events)
	}
	return events[len(events)-1].Data.(turn.Completed)
}

func TestUnitTurnSearchesOnceThenAnswersWithCitations(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("how do sync waves order resources", "Lower waves are applied first [S1]."))
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if done := completed(t, events); done.NotFound || done.Usage.PromptTokens != 200 {
		t.Errorf("turn.completed %+v", done)
	}
	if calls := routetest.OfType(events, turn.EventToolCall); len(calls) != 1 || calls[0].Data.(turn.ToolCall).Query != "how do sync waves order resources" {
		t.Fatalf("tool calls %+v", calls)
	}
	if got := w.index.searches(); len(got) != 1 || got[0] != "how do sync waves order resources" {
		t.Errorf("index searches %q, want the one query", got)
	}
	r := routetest.OfType(events, turn.EventRetrieval)[0].Data.(turn.RetrievalReport)
	if len(r.Sources) == 0 || r.Sources[0].Title != "Sync Waves" || r.Sources[0].Marker != "S1" || r.CacheHit {
		t.Fatalf("retrieval %+v", r)
	}
	for _, s := range r.Sources {
		if s.Title == "Admin Secrets" {
			t.Errorf("a group:admins document reached group:staff")
		}
	}
	if got := routetest.AnswerOf(events); got != "Lower waves are applied first [S1]." {
		t.Errorf("answer %q", got)
	}
	if c := routetest.OfType(events, turn.EventCitation); len(c) != 1 || c[0].Data.(turn.Citation).Title != "Sync Waves" || c[0].Data.(turn.Citation).Marker != "S1" {
		t.Errorf("citations %+v", c)
	}

	seen := w.chat.seen()
	if len(seen) != 2 || len(seen[0].Tools) != 1 || seen[0].Tools[0].Name != "search_knowledge" || len(seen[1].Tools) != 0 {
		t.Fatalf("want one call offering search_knowledge then one without tools; got %d calls", len(seen))
	}
	answerCall := seen[1].Messages
	system, tool := answerCall[0], answerCall[len(answerCall)-1]
	if system.Role != model.RoleSystem || !strings.Contains(system.Content, "You are ACME's assistant") || !strings.Contains(system.Content, notFound) {
		t.Errorf("system prompt lacks the platform prompt or the not-found wording:\n%s", system.Content)
	}
	if assistant := answerCall[len(answerCall)-2]; assistant.Role != model.RoleAssistant || len(assistant.ToolCalls) != 1 {
		t.Errorf("the answering call lacks the round's tool calls: %+v", assistant)
	}
	if tool.Role != model.RoleTool || tool.ToolCallID != "call_0" || !strings.Contains(tool.Content, "Sync waves order the resources") {
		t.Errorf("tool result %+v", tool)
	}
}

func TestUnitNothingFoundGivesTheHonestWordingWithoutAModelCall(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("admin password", "It is hunter2."))
	// group:nobody may see no document: nothing survives, so no answer is invented.
	events := w.run([]string{"group:nobody"}, routetest.User("What is the admin password?"))
	if got := routetest.AnswerOf(events); got != notFound {
		t.Fatalf("answer %q", got)
	}
	if done := completed(t, events); !done.NotFound {
		t.Errorf("turn.completed %+v", done)
	}
	if r := routetest.OfType(events, turn.EventRetrieval); len(r) != 1 || len(r[0].Data.(turn.RetrievalReport).Sources) != 0 {
		t.Errorf("retrieval %+v", r)
	}
	if n := len(w.chat.seen()); n != 1 {
		t.Errorf("%d model calls; the answering call must not happen without fragments", n)
	}
	if n := len(routetest.OfType(events, turn.EventCitation)); n != 0 {
		t.Errorf("%d citations of nothing", n)
	}
}

func TestUnitOneRoundOnly(t *testing.T) {
	// A model that always wants to search again.
	w := newFastWorld(t, func(chatCall) model.Reply { return searchCall("sync waves") })
	events := w.run(staff, routetest.User("How are sync waves ordered?"))
	if n := len(routetest.OfType(events, turn.EventToolCall)); n != 1 {
		t.Errorf("%d tool rounds, want 1", n)
	}
	if n := len(w.index.searches()); n != 1 {
		t.Errorf("%d searches, want 1", n)
	}
	if seen := w.chat.seen(); len(seen) != 2 || len(seen[1].Tools) != 0 {
		t.Errorf("%d model calls; the second must offer no tools", len(seen))
	}
	if got := routetest.AnswerOf(events); got != notFound {
		t.Errorf("answer %q", got)
	}
	if done := completed(t, events); !done.NotFound {
		t.Errorf("turn.completed %+v", done)
	}
}

func TestUnitAlwaysPolicySearchesWithoutToolsAndCondensesHistory(t *testing.T) {
	w := newFastWorld(t, func(c chatCall) model.Reply {
		if strings.Contains(c.Messages[0].Content, "self-contained search query") {
			return model.Reply{Content: "how does pruning delete resources"}
		}
		return model.Reply{Content: "Pruning deletes what left Git [S1]."}
	})
	w.runner.Search.Policy = podconfig.SearchAlways
	events := w.run(staff,
		routetest.User("What are sync waves?"), model.Message{Role: model.RoleAssistant, Content: "They order resources."},
		routetest.User("And what does pruning do?"))
	if calls := routetest.OfType(events, turn.EventToolCall); len(calls) != 1 || calls[0].Data.(turn.ToolCall).Query != "how does pruning delete resources" {
		t.Fatalf("tool calls %+v", calls)
	}
	if got := w.index.searches(); len(got) != 1 || got[0] != "how does pruning delete resources" {
		t.Errorf("index searches %q, want the condensed query", got)
	}
	seen := w.chat.seen()
	if len(seen) != 2 {
		t.Fatalf("%d model calls, want condense then answer", len(seen))
	}
	for _, c := range seen {
		if len(c.Tools) > 0 {
			t.Errorf("always policy offered tools")
		}
	}
	if transcript := seen[0].Messages[1].Content; !strings.Contains(transcript, "user: What are sync waves?") || !strings.Contains(transcript, "user: And what does pruning do?") {
		t.Errorf("condense saw %q, want the conversation", transcript)
	}
	if got := routetest.AnswerOf(events); got != "Pruning deletes what left Git [S1]." {
		t.Errorf("answer %q", got)
	}
	if r := routetest.OfType(events, turn.EventRetrieval)[0].Data.(turn.RetrievalReport); len(r.Sources) == 0 || r.Sources[0].Title != "Pruning" {
		t.Errorf("retrieval %+v", r)
	}
	if started := events[0].Data.(turn.Started); started.Mode != string(podconfig.SearchAlways) {
		t.Errorf("turn.started %+v", started)
	}
	if done := completed(t, events); done.NotFound {
		t.Errorf("turn.completed %+v", done)
	}
}

func TestUnitAlwaysPolicySearchesAFirstQuestionAsAsked(t *testing.T) {
	w := newFastWorld(t, func(c chatCall) model.Reply { return model.Reply{Content: "Pruning deletes what left Git [S1]."} })
	w.runner.Search.Policy = podconfig.SearchAlways
	events := w.run(staff, routetest.User("What does pruning do?"))
	if got := w.index.searches(); len(got) != 1 || got[0] != "What does pruning do?" {
		t.Errorf("index searches %q, want the question as asked", got)
	}
	if seen := w.chat.seen(); len(seen) != 1 || len(seen[0].Tools) != 0 {
		t.Errorf("%d model calls; a first question needs no condensing", len(seen))
	}
	if got := routetest.AnswerOf(events); got != "Pruning deletes what left Git [S1]." {
		t.Errorf("answer %q", got)
	}
}

func TestUnitSmallWindowDropsAndReports(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync", "Syncs apply Git [S1]."))
	w.runner.Window.ContextTokens, w.runner.Window.AnswerReserve = 750, 400
	history := []model.Message{routetest.User(strings.Repeat("Tell me everything about syncing applications. ", 8)),
		{Role: model.RoleAssistant, Content: "Sure."}, routetest.User("What happens in a sync?")}
	events := w.run(staff, history...)
	r := routetest.OfType(events, turn.EventRetrieval)[0].Data.(turn.RetrievalReport)
	if len(r.Dropped) == 0 {
		t.Fatalf("nothing dropped with a tiny window: %+v", r)
	}
	if len(r.Sources) == 0 || r.Sources[0].Marker != "S1" {
		t.Errorf("the highest-ranked fragment did not survive: %+v", r.Sources)
	}
	packed := map[string]bool{}
	for _, s := range r.Sources {
		packed[s.Marker] = true
	}
	for _, d := range r.Dropped {
		if d.Source == "" || (packed[d.Marker] && !d.Cut) {
			t.Errorf("dropped %+v: a dropped fragment is reported by source, and only a cut one is also packed", d)
		}
	}
	seen := w.chat.seen()
	msgs := seen[len(seen)-1].Messages
	checkAnswerCallFitsWindow(t, w.runner, msgs[0].Content, msgs[len(msgs)-1].Content, history)
}

// gatedEmbedder is a stand-in embedder that counts the searches reaching
// it and the most in flight at once. Each call is held a while, and until
// fill calls are in flight (or a deadline), so that calls overlap: a
// missing bound shows as more in flight, a lost parallelism as one.
type gatedEmbedder struct {
	inner knowledge.Embedder
	fill  int

	mu       sync.Mutex
	calls    int
	inFlight int
	maxSeen  int
}

func (e *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls++
	e.inFlight++
	e.maxSeen = max(e.maxSeen, e.inFlight)
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.inFlight--
		e.mu.Unlock()
	}()
	time.Sleep(20 * time.Millisecond)
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		e.mu.Lock()
		full := e.inFlight >= e.fill
		e.mu.Unlock()
		if full {
			break
		}
	}
	return e.inner.Embed(ctx, texts)
}

func (e *gatedEmbedder) counts() (calls, maxInFlight int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls, e.maxSeen
}

// manySearches scripts a model that makes n distinct search calls in its
// one round (distinct, so none is a cache hit), then answers.
func manySearches(n int) func(chatCall) model.Reply {
	return func(c chatCall) model.Reply {
		if len(c.Tools) == 0 {
			return model.Reply{Content: "Lower waves are applied first [S1]."}
		}
		var reply model.Reply
		for i := range n {
			reply.ToolCalls = append(reply.ToolCalls, model.ToolCall{Name: "search_knowledge", Arguments: fmt.Sprintf(`{"query":"sync waves %d"}`, i)})
		}
		return reply
	}
}

func TestUnitToolCallsPerRoundAreCappedAndTheRestAnsweredNotRun(t *testing.T) {
	w := newFastWorld(t, manySearches(30))
	embedder := &gatedEmbedder{inner: w.runner.Searcher.Embedder, fill: turn.ToolCallParallelism}
	w.runner.Searcher.Embedder = embedder
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if done := completed(t, events); done.NotFound {
		t.Errorf("turn.completed %+v", done)
	}
	calls, maxInFlight := embedder.counts()
	calls -= 2 // the grounding check's calls: the fragments' sentences, the answer's
	if calls != turn.DefaultMaxToolCallsPerRound || len(w.index.searches()) != turn.DefaultMaxToolCallsPerRound {
		t.Errorf("%d embeds, %d index searches; want the cap, %d", calls, len(w.index.searches()), turn.DefaultMaxToolCallsPerRound)
	}
	if maxInFlight > turn.ToolCallParallelism {
		t.Errorf("%d searches in flight at once, want at most %d", maxInFlight, turn.ToolCallParallelism)
	}
	if n := len(routetest.OfType(events, turn.EventToolCall)); n != turn.DefaultMaxToolCallsPerRound {
		t.Errorf("%d tool.call events, want one per call run", n)
	}
	if got := routetest.AnswerOf(events); got != "Lower waves are applied first [S1]." {
		t.Errorf("answer %q", got)
	}

	// Every call id gets its tool result; those past the cap say they did not run.
	seen := w.chat.seen()
	answerCall := seen[len(seen)-1].Messages
	var results []model.Message
	for _, m := range answerCall {
		if m.Role == model.RoleTool {
			results = append(results, m)
		}
	}
	if len(results) != 30 {
		t.Fatalf("%d tool results for 30 calls", len(results))
	}
	for i, m := range results {
		notRun := strings.HasPrefix(m.Content, "Not run")
		if m.ToolCallID != "call_"+strconv.Itoa(i) || notRun != (i >= turn.DefaultMaxToolCallsPerRound) {
			t.Errorf("tool result %d: id %q, content %q", i, m.ToolCallID, m.Content)
		}
	}
}

func TestUnitRaisedToolCallCapStillBoundsParallelism(t *testing.T) {
	w := newFastWorld(t, manySearches(30))
	w.runner.Search.MaxToolCallsPerRound = 10
	embedder := &gatedEmbedder{inner: w.runner.Searcher.Embedder, fill: turn.ToolCallParallelism}
	w.runner.Searcher.Embedder = embedder
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	completed(t, events)
	calls, maxInFlight := embedder.counts()
	if calls -= 2; calls != 10 { // less the grounding check's two calls
		t.Errorf("%d searches run, want the route's cap of 10", calls)
	}
	if maxInFlight > turn.ToolCallParallelism || maxInFlight < 2 {
		t.Errorf("%d searches in flight at once, want parallel but at most %d", maxInFlight, turn.ToolCallParallelism)
	}
}
