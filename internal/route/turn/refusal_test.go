package turn_test

import (
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// refusesThenAnswers searches, answers with the not-found wording, and,
// asked again, with again (the wording too when again is empty).
func refusesThenAnswers(again string) func(chatCall) model.Reply {
	return func(c chatCall) model.Reply {
		switch {
		case len(c.Tools) > 0:
			return searchCall("sync waves")
		case strings.Contains(c.Messages[len(c.Messages)-1].Content, "do contain the answer") && again != "":
			return model.Reply{Content: again}
		}
		return model.Reply{Content: routetest.Prompt().NotFound}
	}
}

func refusingWorld(t *testing.T, how podconfig.ModelRefusal, again string) *fastWorld {
	w := newFastWorld(t, refusesThenAnswers(again))
	w.runner.Answer.Answerability = &turn.Answerability{Check: podconfig.AnswerabilityCoverage, MinCoverage: 0.5, RequireNames: true}
	w.runner.Answer.WhenModelRefuses = how
	return w
}

func refusals(events []turn.Event) []turn.ModelRefused {
	var out []turn.ModelRefused
	for _, e := range routetest.OfType(events, turn.EventModelRefused) {
		out = append(out, e.Data.(turn.ModelRefused))
	}
	return out
}

// When the check lets the question through and the model still says not
// found, quote answers with the packed fragments' sentences instead; the
// client never reads the refusal.
func TestARefusalTheCheckContradictsIsAnsweredWithQuotes(t *testing.T) {
	w := refusingWorld(t, podconfig.RefusalQuote, "")
	events := w.run(staff, routetest.User("How are sync waves ordered?"))
	got := routetest.AnswerOf(events)
	if completed(t, events).NotFound || strings.Contains(got, routetest.Prompt().NotFound) || !strings.Contains(got, "lower waves are applied first") {
		t.Errorf("client read %q: want the quoted answer alone", got)
	}
	if r := refusals(events); len(r) != 1 || r[0].Override != "quote" {
		t.Errorf("model.refused %+v", r)
	}
	if len(routetest.OfType(events, turn.EventCitation)) == 0 {
		t.Error("the quotes were not cited")
	}
}

// askAgain asks once more; an answer then is shown, a second refusal
// stands, and there is never a third answer call.
func TestARefusalTheCheckContradictsIsAskedOnceMore(t *testing.T) {
	w := refusingWorld(t, podconfig.RefusalAskAgain, "Lower waves are applied first [S1].")
	events := w.run(staff, routetest.User("How are sync waves ordered?"))
	if got := routetest.AnswerOf(events); got != "Lower waves are applied first [S1]." || completed(t, events).NotFound {
		t.Errorf("client read %q", got)
	}
	if r := refusals(events); len(r) != 1 || r[0].Override != "askAgain" {
		t.Errorf("model.refused %+v", r)
	}

	w = refusingWorld(t, podconfig.RefusalAskAgain, "")
	events = w.run(staff, routetest.User("How are sync waves ordered?"))
	if got := routetest.AnswerOf(events); got != routetest.Prompt().NotFound || !completed(t, events).NotFound {
		t.Errorf("client read %q: want the wording, once", got)
	}
	answers := 0
	for _, c := range w.chat.seen() {
		if len(c.Tools) == 0 {
			answers++
		}
	}
	if r := refusals(events); answers != 2 || len(r) != 2 || !r[1].Again {
		t.Errorf("%d answer calls, model.refused %+v: want two", answers, r)
	}
}

// accept, and any route whose check refused or did not run, lets the
// model's not-found stand; the event still says the model refused.
func TestARefusalStandsUnlessTheRouteOverridesIt(t *testing.T) {
	for _, how := range []podconfig.ModelRefusal{"", podconfig.RefusalAccept} {
		w := refusingWorld(t, how, "")
		events := w.run(staff, routetest.User("How are sync waves ordered?"))
		if got := routetest.AnswerOf(events); got != routetest.Prompt().NotFound || !completed(t, events).NotFound {
			t.Errorf("%q: client read %q", how, got)
		}
		if r := refusals(events); len(r) != 1 || r[0].Override != "accept" {
			t.Errorf("%q: model.refused %+v", how, r)
		}
	}
	w := newFastWorld(t, refusesThenAnswers(""))
	w.runner.Answer.WhenModelRefuses = podconfig.RefusalQuote // no check: nothing says the fragments answer
	events := w.run(staff, routetest.User("How are sync waves ordered?"))
	if got := routetest.AnswerOf(events); got != routetest.Prompt().NotFound {
		t.Errorf("no check: client read %q", got)
	}
}
