package route_test

import (
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/routetest"
)

// With searchPolicy always and extractive answers a turn needs no chat
// model: the question is searched as asked and the answer quotes the
// fragments, cited.
func TestExtractiveTurnCallsNoModel(t *testing.T) {
	w := newFastWorld(t, func(chatCall) model.Reply { return model.Reply{Content: "invented"} })
	w.runner.Policy, w.runner.AnswerMode = podconfig.SearchAlways, podconfig.AnswerExtractive
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if n := len(w.chat.seen()); n != 0 {
		t.Errorf("%d model calls, want none", n)
	}
	answer := routetest.AnswerOf(events)
	if !strings.Contains(answer, "[S1]") || !strings.Contains(answer, "> Sync waves order the resources") || strings.Contains(answer, "invented") {
		t.Errorf("answer:\n%s", answer)
	}
	if done := completed(t, events); done.NotFound || len(routetest.OfType(events, route.EventCitation)) == 0 {
		t.Errorf("completed %+v, citations %v", done, routetest.OfType(events, route.EventCitation))
	}
}
