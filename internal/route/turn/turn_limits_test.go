package turn_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// topicDocs are n documents on topic, each its own fragment.
func topicDocs(topic string, n int) []ingest.Document {
	var docs []ingest.Document
	for i := range n {
		docs = append(docs, ingest.Document{Source: fmt.Sprintf("%s-%d.md", strings.ReplaceAll(topic, " ", "-"), i), Principals: []string{"group:staff"},
			Content: fmt.Sprintf("# %s note %d\n\nThe %s are described here (note %d).\n", topic, i, topic, i)})
	}
	return docs
}

// parallelSearches scripts a model that calls search_knowledge once per
// query in one round, then answers.
func parallelSearches(answer string, queries ...string) func(chatCall) model.Reply {
	return func(c chatCall) model.Reply {
		if len(c.Tools) == 0 {
			return model.Reply{Content: answer}
		}
		var reply model.Reply
		for i, q := range queries {
			reply.ToolCalls = append(reply.ToolCalls, model.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "search_knowledge",
				Arguments: `{"query":"` + q + `"}`})
		}
		return reply
	}
}

// fencedBlocks counts the fragments the answering call was given.
func fencedBlocks(answerCall chatCall) int {
	n := 0
	for _, m := range answerCall.Messages {
		if m.Role == model.RoleTool {
			n += strings.Count(m.Content, " end S")
		}
	}
	return n
}

// retrieval.maxFragments is the most a turn packs: a round of three
// searches, each finding the cap, packs the cap, the searches' best
// fragments first (each search's best, then each one's second); the rest
// are reported capped, never packed nor cited.
func TestMaxFragmentsCapsTheTurnNotEachSearch(t *testing.T) {
	w := newFastWorld(t, parallelSearches("Hooks run during a sync [S1] [S6].",
		"blue gateways", "green ledgers", "amber beacons"))
	for _, topic := range []string{"blue gateways", "green ledgers", "amber beacons"} {
		w.index.add(t, w.runner.Searcher.Embedder, topicDocs(topic, 4)...)
	}
	limit := w.runner.Searcher.Settings.MaxFragments
	events := w.run([]string{"group:staff"}, routetest.User("Tell me about gateways, ledgers and beacons."))

	reports := routetest.OfType(events, turn.EventRetrieval)
	if len(reports) != 3 {
		t.Fatalf("want a retrieval event per search, got %d", len(reports))
	}
	markers, capped := map[string]bool{}, 0
	for _, e := range reports {
		r := e.Data.(turn.RetrievalReport)
		if len(r.Sources) == 0 {
			t.Errorf("search %q had none of its fragments packed: the cap is not shared fairly", r.Query)
		}
		for _, s := range r.Sources {
			markers[s.Marker] = true
		}
		capped += r.Capped
	}
	if len(markers) > limit {
		t.Errorf("the turn packed %d fragments; retrieval.maxFragments is %d", len(markers), limit)
	}
	if capped == 0 {
		t.Errorf("three searches of %d fragments each and none reported capped", limit)
	}
	seen := w.chat.seen()
	if got := fencedBlocks(seen[len(seen)-1]); got > limit {
		t.Errorf("the answering call was given %d fragments; retrieval.maxFragments is %d", got, limit)
	}
	for _, c := range routetest.OfType(events, turn.EventCitation) {
		if m := c.Data.(turn.Citation).Marker; !markers[m] {
			t.Errorf("cited %s, which was not packed", m)
		}
	}
}

// An agentic turn packs what the research finalizes, under the same cap:
// a finalize that ranks every fragment it was shown packs maxFragments.
func TestMaxFragmentsCapsWhatAnAgenticTurnFinalizes(t *testing.T) {
	var ids []string
	for i := range 12 {
		ids = append(ids, fmt.Sprintf("F%d", i+1))
	}
	w := newFastWorld(t, agenticScript("Gateways, ledgers and beacons [S1].",
		hSearch("blue gateways"), hSearch("green ledgers"), hSearch("amber beacons"),
		hFinalize(ids, []string{"gateways", "ledgers", "beacons"}, nil)))
	w.runner.Mode = podconfig.ModeAgentic
	for _, topic := range []string{"blue gateways", "green ledgers", "amber beacons"} {
		w.index.add(t, w.runner.Searcher.Embedder, topicDocs(topic, 4)...)
	}
	limit := w.runner.Searcher.Settings.MaxFragments
	events := w.run(staff, routetest.User("Tell me about gateways, ledgers and beacons."))

	if f := routetest.OfType(events, turn.EventFinalized); len(f) != 1 || len(f[0].Data.(turn.Finalized).Fragments) > limit {
		t.Fatalf("finalized %+v: want the model's finalize, at most %d ids", f, limit)
	}
	packed := 0
	for _, e := range routetest.OfType(events, turn.EventRetrieval) {
		if r := e.Data.(turn.RetrievalReport); r.Round == 0 {
			packed += len(r.Sources)
		}
	}
	if packed == 0 || packed > limit {
		t.Errorf("the agentic turn packed %d fragments; retrieval.maxFragments is %d", packed, limit)
	}
	seen := w.chat.seen()
	if got := fencedBlocks(seen[len(seen)-1]); got == 0 || got > limit {
		t.Errorf("the answering call was given %d fragments; retrieval.maxFragments is %d", got, limit)
	}
}

// longChat is a conversation of n exchanges of about 300 tokens a
// message, then question.
func longChat(n int, question string) []model.Message {
	var messages []model.Message
	for i := range n {
		messages = append(messages,
			routetest.User(fmt.Sprintf("Question %d: %s", i, strings.Repeat("tell me more about the deployment pipelines and their stages, ", 30))),
			model.Message{Role: model.RoleAssistant, Content: fmt.Sprintf("Answer %d: %s", i, strings.Repeat("the pipelines run their stages in order, ", 36))})
	}
	return append(messages, routetest.User(question))
}

// requestTokens counts a model call as the chat model receives it, with
// the route's tokenizer: each message's text and tool calls, its framing,
// and the tools offered.
func requestTokens(t *testing.T, w *fastWorld, c chatCall) int {
	t.Helper()
	tools, err := json.Marshal(c.Tools)
	if err != nil {
		t.Fatal(err)
	}
	n := w.runner.Window.Tokens.Count(string(tools))
	for _, m := range c.Messages {
		n += w.runner.Window.Tokens.Count(m.Content) + 4
		for _, tc := range m.ToolCalls {
			n += w.runner.Window.Tokens.Count(tc.Name) + w.runner.Window.Tokens.Count(tc.Arguments) + 4
		}
	}
	return n
}

// A long conversation is trimmed oldest first into its share of the
// window: the turn still packs fragments and answers from them, the
// retrieval event and turn.completed say how many messages were dropped,
// and no model call of the turn (decide, condense, the agentic rounds,
// the answer) leaves the answer less than its reserve.
func TestALongConversationIsTrimmedIntoTheWindow(t *testing.T) {
	const question = "How are sync waves ordered?"
	const answer = "Lower waves are applied first [S1]."
	cases := map[string]func(*fastWorld){
		"modelDecides": func(*fastWorld) {},
		"always":       func(w *fastWorld) { w.runner.Search.Policy = podconfig.SearchAlways },
		"agentic": func(w *fastWorld) {
			w.runner.Mode = podconfig.ModeAgentic
			w.chat.script = agenticScript(answer, hSearch("sync waves order"),
				hFinalize([]string{"F1"}, []string{"how waves are ordered"}, nil))
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			w := newFastWorld(t, func(c chatCall) model.Reply {
				if len(c.Messages) > 0 && strings.HasPrefix(c.Messages[0].Content, "Rewrite the user's last question") {
					return model.Reply{Content: "how are sync waves ordered"}
				}
				return searchesThenAnswers("sync waves order", answer)(c)
			})
			setup(w)
			history := longChat(30, question)
			if n := w.runner.Window.Tokens.Count(fmt.Sprint(history)); n < 2*w.runner.Window.ContextTokens {
				t.Fatalf("the conversation is %d tokens: not longer than the window", n)
			}
			events := w.run(staff, history...)

			if got := routetest.AnswerOf(events); got != answer {
				t.Errorf("answer %q: want the grounded answer", got)
			}
			done := completed(t, events)
			if done.NotFound || done.HistoryTrimmed == 0 {
				t.Errorf("turn.completed %+v: want an answer and the trimmed history counted", done)
			}
			var packed bool
			for _, e := range routetest.OfType(events, turn.EventRetrieval) {
				if r := e.Data.(turn.RetrievalReport); r.Round == 0 {
					packed = packed || len(r.Sources) > 0
					if r.HistoryTrimmed != done.HistoryTrimmed {
						t.Errorf("retrieval reports %d messages trimmed, turn.completed %d", r.HistoryTrimmed, done.HistoryTrimmed)
					}
				}
			}
			if !packed {
				t.Error("no fragment packed beside the long conversation")
			}
			limit := w.runner.Window.ContextTokens - w.runner.Window.AnswerReserve
			for i, c := range w.chat.seen() {
				if n := requestTokens(t, w, c); n > limit {
					t.Errorf("model call %d counts %d tokens; the window leaves %d after the answer reserve", i, n, limit)
				}
				if c.Messages[0].Role != model.RoleSystem {
					t.Errorf("model call %d lost its system prompt", i)
				}
			}
			last := w.chat.seen()[len(w.chat.seen())-1].Messages
			if !slices.ContainsFunc(last, func(m model.Message) bool { return m.Role == model.RoleUser && m.Content == question }) {
				t.Error("the answering call lost the question")
			}
		})
	}
}
