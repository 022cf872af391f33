package turn_test

import (
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/routetest"
)

const russianNotFound = "В документации ACME об этом ничего не нашлось."

// withRussianWording gives the world's platform prompt a Russian
// not-found wording beside its English default.
func withRussianWording(w *fastWorld) *fastWorld {
	w.runner.Prompt.NotFoundByLanguage = map[string]string{"ru": russianNotFound}
	return w
}

// The answering call's system prompt names the question's language and
// the wording to say in it; an English question keeps the default.
func TestTheModelIsToldToAnswerInTheQuestionsLanguage(t *testing.T) {
	cases := []struct {
		question, language, wording string
	}{
		{"Как упорядочиваются sync waves?", "The question is in Russian: answer in Russian.", russianNotFound},
		{"How are sync waves ordered?", "The question is in English: answer in English.", routetest.Prompt().NotFound},
	}
	for _, c := range cases {
		w := withRussianWording(newFastWorld(t, searchesThenAnswers("sync waves", "Lower waves are applied first [S1].")))
		w.run(staff, routetest.User(c.question))
		calls := w.chat.seen()
		if len(calls) != 2 {
			t.Fatalf("%q: %d model calls, want decide and answer", c.question, len(calls))
		}
		for i, call := range calls {
			system := call.Messages[0]
			if system.Role != model.RoleSystem || !strings.Contains(system.Content, c.language) ||
				!strings.Contains(system.Content, "reply exactly: \""+c.wording+"\"") {
				t.Errorf("%q: call %d's system prompt:\n%s\nwant %q and the wording %q", c.question, i, system.Content, c.language, c.wording)
			}
		}
	}
}

// The route says not found in the question's language, and recognizes
// every wording of the platform as not found: a model that writes the
// English one to a Russian question still ends a not-found turn.
func TestNotFoundIsSaidAndRecognisedInEachLanguage(t *testing.T) {
	cases := []struct {
		name, question, reply, read string
	}{
		{"Russian wording to a Russian question", "Как упорядочиваются sync waves?", russianNotFound, russianNotFound},
		{"English wording to a Russian question", "Как упорядочиваются sync waves?", routetest.Prompt().NotFound, routetest.Prompt().NotFound},
		{"Russian wording to an English question", "How are sync waves ordered?", russianNotFound, russianNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := withRussianWording(newFastWorld(t, searchesThenAnswers("sync waves", c.reply)))
			events := w.run(staff, routetest.User(c.question))
			if got := routetest.AnswerOf(events); got != c.read {
				t.Errorf("client read %q, want %q", got, c.read)
			}
			if done := completed(t, events); !done.NotFound {
				t.Errorf("completed %+v, want not_found", done)
			}
		})
	}
}

// When the route itself says not found (the model asked for tools again
// and wrote nothing), it says so in the question's language.
func TestTheRoutesOwnNotFoundIsInTheQuestionsLanguage(t *testing.T) {
	for question, want := range map[string]string{
		"Как упорядочиваются sync waves?": russianNotFound,
		"How are sync waves ordered?":     routetest.Prompt().NotFound,
	} {
		w := withRussianWording(newFastWorld(t, func(c chatCall) model.Reply { return searchCall("sync waves") }))
		events := w.run(staff, routetest.User(question))
		if got := routetest.AnswerOf(events); got != want {
			t.Errorf("%q: client read %q, want %q", question, got, want)
		}
		if done := completed(t, events); !done.NotFound {
			t.Errorf("%q: completed %+v, want not_found", question, done)
		}
	}
}
