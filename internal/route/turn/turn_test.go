package turn_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
)

func TestTurnSearchesOnceThenAnswersWithCitations(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("how do sync waves order resources", "Lower waves are applied first [S1].")
	events := w.Run(t, []string{"user:ann", "group:staff", "public"}, routetest.User("How are sync waves ordered?"))

	if events[0].Type != turn.EventTurnStarted || events[len(events)-1].Type != turn.EventTurnCompleted {
		t.Fatalf("events %v", events)
	}
	if calls := routetest.OfType(events, turn.EventToolCall); len(calls) != 1 || calls[0].Data.(turn.ToolCall).Query != "how do sync waves order resources" {
		t.Fatalf("tool calls %+v", calls)
	}
	r := routetest.OfType(events, turn.EventRetrieval)[0].Data.(turn.RetrievalReport)
	if len(r.Sources) == 0 || r.Sources[0].Title != "Sync Waves" || r.Sources[0].Marker != "S1" {
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
	if c := routetest.OfType(events, turn.EventCitation); len(c) != 1 || c[0].Data.(turn.Citation).Title != "Sync Waves" {
		t.Errorf("citations %+v", c)
	}

	seen := w.Models.Seen()
	if len(seen) != 2 || len(seen[0].Tools) != 1 || len(seen[1].Tools) != 0 {
		t.Fatalf("want one call with search_knowledge then one without tools; got %d calls", len(seen))
	}
	answerCall := seen[1].Messages
	system, tool := answerCall[0].Content, answerCall[len(answerCall)-1]
	if !strings.Contains(system, "You are ACME's assistant") || !strings.Contains(system, "I could not find this in ACME's documentation.") {
		t.Errorf("system prompt lacks the platform prompt or the not-found wording:\n%s", system)
	}
	if tool.Role != "tool" || !strings.Contains(tool.Content, "Sync waves order the resources") {
		t.Errorf("tool result %+v", tool)
	}
}

func TestInjectedInstructionsStayFencedData(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync hooks", "Sync hooks run during a sync [S1].")
	events := w.Run(t, []string{"group:staff"}, routetest.User("What do sync hooks do?"))
	if routetest.AnswerOf(events) == "" {
		t.Fatal("no answer")
	}
	seen := w.Models.Seen()
	msgs := seen[1].Messages
	if strings.Contains(msgs[0].Content, "Ignore previous instructions") {
		t.Fatal("fragment text reached the system prompt")
	}
	tool := msgs[len(msgs)-1].Content
	at := strings.Index(tool, "Ignore previous instructions")
	if at < 0 {
		t.Fatal("the injected fragment was not retrieved")
	}
	// The real fence is random per turn: the document's fake closing
	// marker does not close it.
	fence := tool[strings.Index(tool, "⟦data-") : strings.Index(tool, "⟧")+len("⟧")]
	if fence == "⟦data-000000000000⟧" {
		t.Fatal("fence is not random")
	}
	open := strings.LastIndex(tool[:at], fence+" S")
	closing := strings.Index(tool[at:], fence+" end S")
	if open < 0 || closing < 0 || strings.Count(tool[open:at+closing], fence) != 1 {
		t.Errorf("injected text is not inside its fence:\n%s", tool)
	}
}

func TestEchoedFenceMarkersNeverReachTheUser(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		if len(req.Tools) > 0 {
			return routetest.SearchThenAnswer("sync hooks", "")(req)
		}
		// A small model echoing the packing's markers back.
		tool := req.Messages[len(req.Messages)-1].Content
		fence := tool[strings.Index(tool, "⟦data-") : strings.Index(tool, "⟧")+len("⟧")]
		return testenv.ChatReply{Content: "Sync hooks run during a sync [S1].\n" + fence + " end S1\nThat is all."}
	}
	events := w.Run(t, []string{"group:staff"}, routetest.User("What do sync hooks do?"))
	if got := routetest.AnswerOf(events); got != "Sync hooks run during a sync [S1].\n\nThat is all." {
		t.Errorf("answer %q", got)
	}
	if len(routetest.OfType(events, turn.EventCitation)) != 1 {
		t.Errorf("citations %+v", routetest.OfType(events, turn.EventCitation))
	}
}

func TestNothingFoundGivesTheHonestWording(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("admin password", "It is hunter2.")
	// group:nobody may see no document: nothing survives, so no answer is invented.
	events := w.Run(t, []string{"group:nobody"}, routetest.User("What is the admin password?"))
	if got := routetest.AnswerOf(events); got != "I could not find this in ACME's documentation." {
		t.Fatalf("answer %q", got)
	}
	if done := routetest.OfType(events, turn.EventTurnCompleted)[0].Data.(turn.Completed); !done.NotFound {
		t.Errorf("turn.completed %+v", done)
	}
	if n := len(w.Models.Seen()); n != 1 {
		t.Errorf("%d model calls; the answering call must not happen without fragments", n)
	}
}

func TestDirectAnswerStreamsThrough(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = func(testenv.ChatRequest) testenv.ChatReply {
		return testenv.ChatReply{Content: "Hello! Ask me about Argo CD."}
	}
	events := w.Run(t, []string{"group:staff"}, routetest.User("hi"))
	if routetest.AnswerOf(events) != "Hello! Ask me about Argo CD." || len(routetest.OfType(events, turn.EventToolCall)) != 0 || len(w.Models.Seen()) != 1 {
		t.Fatalf("events %+v", events)
	}
}

func TestAlwaysPolicySearchesWithoutToolsAndCondensesHistory(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Engine.Search.Policy = podconfig.SearchAlways
	w.Models.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		if strings.Contains(req.Messages[0].Content, "self-contained search query") {
			return testenv.ChatReply{Content: "how does pruning delete resources"}
		}
		return testenv.ChatReply{Content: "Pruning deletes what left Git [S1]."}
	}
	events := w.Run(t, []string{"group:staff"},
		routetest.User("What are sync waves?"), model.Message{Role: model.RoleAssistant, Content: "They order resources."},
		routetest.User("And what does pruning do?"))
	if calls := routetest.OfType(events, turn.EventToolCall); len(calls) != 1 || calls[0].Data.(turn.ToolCall).Query != "how does pruning delete resources" {
		t.Fatalf("tool calls %+v", calls)
	}
	for _, req := range w.Models.Seen() {
		if len(req.Tools) > 0 {
			t.Errorf("always policy offered tools")
		}
	}
	if routetest.AnswerOf(events) != "Pruning deletes what left Git [S1]." {
		t.Errorf("answer %q", routetest.AnswerOf(events))
	}
}

func TestSmallWindowDropsAndReports(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Engine.Window.ContextTokens, w.Engine.Window.AnswerReserve = 750, 400
	w.Models.Chat = routetest.SearchThenAnswer("sync", "Syncs apply Git [S1].")
	history := []model.Message{routetest.User(strings.Repeat("Tell me everything about syncing applications. ", 8)),
		{Role: model.RoleAssistant, Content: "Sure."}, routetest.User("What happens in a sync?")}
	events := w.Run(t, []string{"group:staff"}, history...)
	r := routetest.OfType(events, turn.EventRetrieval)[0].Data.(turn.RetrievalReport)
	if len(r.Dropped) == 0 {
		t.Fatalf("nothing dropped with a tiny window: %+v", r)
	}
	if len(r.Sources) == 0 || r.Sources[0].Marker != "S1" {
		t.Errorf("the highest-ranked fragment did not survive: %+v", r.Sources)
	}
	seen := w.Models.Seen()
	msgs := seen[len(seen)-1].Messages
	checkAnswerCallFitsWindow(t, w.Engine, msgs[0].Content, msgs[len(msgs)-1].Content, history)
}

// checkAnswerCallFitsWindow: the answering call (system prompt + history +
// packed context) fits the window minus the answer reserve, and the
// history was not copied into the packing.
func checkAnswerCallFitsWindow(t *testing.T, runner *turn.Engine, system, tool string, history []model.Message) {
	t.Helper()
	if strings.Contains(tool, "Tell me everything") {
		t.Error("history was copied into the packing")
	}
	used := runner.Window.Tokens.Count(system) + runner.Window.Tokens.Count(tool)
	for _, m := range history {
		used += runner.Window.Tokens.Count(m.Content)
	}
	if limit := runner.Window.ContextTokens - runner.Window.AnswerReserve; used > limit {
		t.Errorf("packed %d tokens, the window leaves %d", used, limit)
	}
}

func TestWebSearchRunsInParallelWithKnowledgeSearch(t *testing.T) {
	w := routetest.NewWorld(t)
	web := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.Header.Get("Authorization") != "Bearer key" {
			http.Error(rw, "no", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(rw, `{"results":[{"title":"Argo CD 9 released","url":"https://news.example/argo9","content":"Argo CD 9 was released this week."}]}`)
	}))
	defer web.Close()
	w.Engine.Search.WebSearch = &retrieval.WebSearch{BaseURL: web.URL, APIKey: "key", MaxResults: 3, HTTP: web.Client()}
	w.Models.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		if len(req.Tools) > 0 {
			if len(req.Tools) != 2 {
				return testenv.ChatReply{Content: "expected two tools"}
			}
			return testenv.ChatReply{ToolCalls: []testenv.ScriptedToolCall{
				{Name: "search_knowledge", Arguments: `{"query":"sync waves"}`},
				{Name: "web_search", Arguments: `{"query":"latest argo cd release"}`},
			}}
		}
		return testenv.ChatReply{Content: "Waves order resources [S1]; Argo CD 9 is out [S2][S3][S4][S5][S6]."}
	}
	events := w.Run(t, []string{"group:staff"}, routetest.User("How do sync waves work, and what is the latest release?"))
	if n := len(routetest.OfType(events, turn.EventRetrieval)); n != 2 {
		t.Fatalf("%d retrieval events: %+v", n, events)
	}
	cited := map[string]bool{}
	for _, c := range routetest.OfType(events, turn.EventCitation) {
		cited[c.Data.(turn.Citation).SourceURI] = true
	}
	if !cited["https://news.example/argo9"] {
		t.Errorf("the web result was not citable: %+v", cited)
	}
	msgs := w.Models.Seen()[1].Messages
	if tool := msgs[len(msgs)-1]; tool.Role != "tool" || !strings.Contains(tool.Content, "Argo CD 9 was released") {
		t.Errorf("web result not in its tool message: %+v", tool)
	}
}

func TestOneRoundOnly(t *testing.T) {
	w := routetest.NewWorld(t)
	// A model that always wants to search again.
	w.Models.Chat = func(testenv.ChatRequest) testenv.ChatReply {
		return testenv.ChatReply{ToolCalls: []testenv.ScriptedToolCall{{Name: "search_knowledge", Arguments: `{"query":"sync waves"}`}}}
	}
	events := w.Run(t, []string{"group:staff"}, routetest.User("How are sync waves ordered?"))
	if n := len(routetest.OfType(events, turn.EventToolCall)); n != 1 {
		t.Errorf("%d tool rounds, want 1", n)
	}
	if n := len(w.Models.Seen()); n != 2 || len(w.Models.Seen()[1].Tools) != 0 {
		t.Errorf("%d model calls; the second must offer no tools", n)
	}
	if got := routetest.AnswerOf(events); got != "I could not find this in ACME's documentation." {
		t.Errorf("answer %q", got)
	}
}

func TestTwoIdentitiesGetDifferentSources(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("admin password secret", "See [S1].")
	sourcesOf := func(principals ...string) map[string]bool {
		out := map[string]bool{}
		for _, e := range routetest.OfType(w.Run(t, principals, routetest.User("Where is the admin password?")), turn.EventRetrieval) {
			for _, s := range e.Data.(turn.RetrievalReport).Sources {
				out[s.SourceURI] = true
			}
		}
		return out
	}
	staff := sourcesOf("user:ann", "group:staff", "public")
	admins := sourcesOf("user:root", "group:admins", "public")
	if staff["secrets.md"] || !admins["secrets.md"] {
		t.Errorf("staff saw %v, admins saw %v", staff, admins)
	}
}

func TestToolCallsPastTheRoundCapAreNotRun(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		if len(req.Tools) == 0 {
			return testenv.ChatReply{Content: "Lower waves are applied first [S1]."}
		}
		var calls []testenv.ScriptedToolCall
		for i := range 30 {
			calls = append(calls, testenv.ScriptedToolCall{Name: "search_knowledge", Arguments: fmt.Sprintf(`{"query":"sync waves %d"}`, i)})
		}
		return testenv.ChatReply{ToolCalls: calls}
	}
	before := w.Models.Requests.Load()
	events := w.Run(t, []string{"group:staff"}, routetest.User("How are sync waves ordered?"))
	if events[len(events)-1].Type != turn.EventTurnCompleted {
		t.Fatalf("events %+v", events)
	}
	// Two chat calls (decide, answer), one embedding per search run and
	// two for the grounding check (the fragments' sentences, the answer's).
	if embeds := w.Models.Requests.Load() - before - 4; embeds != turn.DefaultMaxToolCallsPerRound {
		t.Errorf("%d searches embedded, want the cap, %d", embeds, turn.DefaultMaxToolCallsPerRound)
	}
	if got := routetest.AnswerOf(events); got != "Lower waves are applied first [S1]." {
		t.Errorf("answer %q", got)
	}
	answerCall := w.Models.Seen()[1].Messages
	notRun, ids := 0, map[string]bool{}
	for _, m := range answerCall {
		if m.Role == "tool" {
			ids[m.ToolCallID] = true
			if strings.HasPrefix(m.Content, "Not run") {
				notRun++
			}
		}
	}
	if len(ids) != 30 || notRun != 30-turn.DefaultMaxToolCallsPerRound {
		t.Errorf("%d call ids answered, %d of them not run; want 30 and %d", len(ids), notRun, 30-turn.DefaultMaxToolCallsPerRound)
	}
}
