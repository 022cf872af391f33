package turn_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// With searchPolicy always and extractive answers a turn needs no chat
// model: the question is searched as asked and the answer quotes the
// fragments, cited.
func TestExtractiveTurnCallsNoModel(t *testing.T) {
	w := newFastWorld(t, func(chatCall) model.Reply { return model.Reply{Content: "invented"} })
	w.runner.Search.Policy, w.runner.Answer.Mode = podconfig.SearchAlways, podconfig.AnswerExtractive
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if n := len(w.chat.seen()); n != 0 {
		t.Errorf("%d model calls, want none", n)
	}
	answer := routetest.AnswerOf(events)
	if !strings.Contains(answer, "[S1]") || !strings.Contains(answer, "> Sync waves order the resources") || strings.Contains(answer, "invented") {
		t.Errorf("answer:\n%s", answer)
	}
	if done := completed(t, events); done.NotFound || len(routetest.OfType(events, turn.EventCitation)) == 0 {
		t.Errorf("completed %+v, citations %v", done, routetest.OfType(events, turn.EventCitation))
	}
}

// An extractive answer is capped as a model's answer is: by the client's
// max_tokens and by the route's model.maxTokens, not only by the
// window's answer reserve.
func TestExtractiveAnswerKeepsToTheAnswersMaxTokens(t *testing.T) {
	var sentences []string
	for i := range 40 {
		sentences = append(sentences, fmt.Sprintf("Sync waves order resource group %d during a sync.", i))
	}
	long := ingest.Document{Source: "waves-long.md", Principals: []string{"group:staff"},
		Content: "# Sync waves in depth\n\n" + strings.Join(sentences, " ") + "\n"}
	for _, tc := range []struct {
		name                string
		routeMax, clientMax int
	}{{"client max_tokens", 0, 40}, {"route model.maxTokens", 40, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newFastWorld(t, func(chatCall) model.Reply { return model.Reply{} })
			w.index.add(t, w.runner.Searcher.Embedder, long)
			w.runner.Search.Policy, w.runner.Answer.Mode, w.runner.Answer.MaxTokens = podconfig.SearchAlways, podconfig.AnswerExtractive, tc.routeMax
			var events []turn.Event
			w.runner.Run(context.Background(), turn.Input{ID: "t1", Messages: []model.Message{routetest.User("How do sync waves order resources?")},
				Principals: staff, Generation: model.Generation{MaxTokens: tc.clientMax}}, func(e turn.Event) { events = append(events, e) })
			answer := routetest.AnswerOf(events)
			if answer == "" || completed(t, events).NotFound {
				t.Fatalf("no extractive answer: %v", events)
			}
			if n := w.runner.Window.Tokens.Count(answer); n > 40 {
				t.Errorf("the extractive answer is %d tokens; max_tokens 40:\n%s", n, answer)
			}
		})
	}
}
