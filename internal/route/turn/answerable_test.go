package turn_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// answersWithOdds scripts a model that searches when offered tools,
// answers the answerability question with the odds of yes given, and
// otherwise answers with answer.
func answersWithOdds(yes float64, answer string) func(chatCall) model.Reply {
	return func(c chatCall) model.Reply {
		switch {
		case len(c.Tools) > 0:
			return searchCall("sync waves")
		case c.Gen.TopLogprobs > 0:
			return model.Reply{Content: "No", FirstToken: []model.TokenLogprob{
				{Token: "No", Logprob: math.Log(1 - yes)}, {Token: "Yes", Logprob: math.Log(yes)}, {Token: "I", Logprob: -9}}}
		}
		return model.Reply{Content: answer}
	}
}

func withAnswerability(w *fastWorld, minProbability float64) *fastWorld {
	w.runner.Answer.Answerability = &turn.Answerability{Check: podconfig.AnswerabilityModel, MinProbability: minProbability}
	return w
}

// A model that finds the fragments unlikely to answer never writes an
// answer: the client reads the platform's not-found wording, and the
// turn says not found and why.
func TestUnlikelyAnswerableFragmentsGetTheNotFoundWording(t *testing.T) {
	w := withAnswerability(newFastWorld(t, answersWithOdds(0.1, "Use --velero-backup to back up [S1].")), 0.5)
	events := w.run(staff, routetest.User("How do I back up Argo CD with Velero?"))

	if got := routetest.AnswerOf(events); got != routetest.Prompt().NotFound {
		t.Errorf("client read %q, want the not-found wording", got)
	}
	if done := completed(t, events); !done.NotFound {
		t.Errorf("completed %+v, want not_found", done)
	}
	reports := routetest.OfType(events, turn.EventAnswerability)
	if len(reports) != 1 {
		t.Fatalf("answerability events %+v", reports)
	}
	if r := reports[0].Data.(turn.AnswerabilityReport); r.Answerable || r.Check != "model" || math.Abs(r.Score-0.1) > 0.01 || r.Threshold != 0.5 {
		t.Errorf("answerability %+v", r)
	}
	for _, c := range w.chat.seen() {
		if len(c.Tools) == 0 && c.Gen.TopLogprobs == 0 {
			t.Errorf("the model was asked to answer: %+v", c.Messages[len(c.Messages)-1])
		}
	}
}

// Likely answerable: the answer streams, and the check asked the
// answering call's own messages plus one question, so a server's prompt
// cache reads only that question.
func TestTheCheckSharesTheAnswersPromptAndAsksForOneToken(t *testing.T) {
	w := withAnswerability(newFastWorld(t, answersWithOdds(0.9, groundedSentence)), 0.5)
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if got := routetest.AnswerOf(events); got != groundedSentence {
		t.Errorf("client read %q", got)
	}
	calls := w.chat.seen()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want decide, check, answer", len(calls))
	}
	check, answer := calls[1], calls[2]
	if check.Gen.MaxTokens != 1 || check.Gen.TopLogprobs == 0 || check.Gen.Temperature == nil || *check.Gen.Temperature != 0 {
		t.Errorf("the check's generation %+v, want one greedy token with its alternatives", check.Gen)
	}
	n := len(answer.Messages)
	if len(check.Messages) != n+1 || !slices.EqualFunc(check.Messages[:n], answer.Messages, messagesEqual) {
		t.Fatalf("the check's messages are not the answer's plus one:\ncheck  %+v\nanswer %+v", check.Messages, answer.Messages)
	}
	if last := check.Messages[n]; last.Role != model.RoleUser || !strings.Contains(last.Content, "yes or no") {
		t.Errorf("the check asked %+v", last)
	}
	if done := completed(t, events); done.NotFound {
		t.Errorf("completed %+v", done)
	}
}

// A model whose first token is neither yes nor no cannot be read: the
// check does not refuse on it.
func TestAReplyWithoutYesOrNoIsNotARefusal(t *testing.T) {
	w := withAnswerability(newFastWorld(t, func(c chatCall) model.Reply {
		switch {
		case len(c.Tools) > 0:
			return searchCall("sync waves")
		case c.Gen.TopLogprobs > 0:
			return model.Reply{Content: "The", FirstToken: []model.TokenLogprob{{Token: "The", Logprob: -0.1}, {Token: "I", Logprob: -2}}}
		}
		return model.Reply{Content: groundedSentence}
	}), 0.5)
	events := w.run(staff, routetest.User("How are sync waves ordered?"))
	if got := routetest.AnswerOf(events); got != groundedSentence {
		t.Errorf("client read %q", got)
	}
}

// Extractive answers quote the fragments: no model is asked anything.
func TestExtractiveAnswersAreNeverChecked(t *testing.T) {
	w := withAnswerability(newFastWorld(t, answersWithOdds(0.1, "")), 0.5)
	w.runner.Answer.Mode = podconfig.AnswerExtractive
	events := w.run(staff, routetest.User("How are sync waves ordered?"))
	if len(routetest.OfType(events, turn.EventAnswerability)) != 0 {
		t.Error("an extractive turn was checked")
	}
	for _, c := range w.chat.seen() {
		if c.Gen.TopLogprobs > 0 {
			t.Error("the model was asked the answerability question")
		}
	}
}

func messagesEqual(a, b model.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID && slices.Equal(a.ToolCalls, b.ToolCalls)
}

// coverage: a question about something no packed fragment names is
// answered with the not-found wording, the model never asked to answer,
// and the words that were missing are reported.
func TestAQuestionThePackedFragmentsDoNotCoverIsNotFound(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync waves velero backups", "Back up with Velero [S1]."))
	w.runner.Answer.Answerability = &turn.Answerability{Check: podconfig.AnswerabilityCoverage, MinCoverage: 0.75}
	events := w.run(staff, routetest.User("How do Velero backups schedule sync waves?"))

	if got := routetest.AnswerOf(events); got != routetest.Prompt().NotFound {
		t.Errorf("client read %q, want the not-found wording", got)
	}
	reports := routetest.OfType(events, turn.EventAnswerability)
	if len(reports) != 1 {
		t.Fatalf("answerability events %+v", reports)
	}
	r := reports[0].Data.(turn.AnswerabilityReport)
	if r.Answerable || r.Check != "coverage" || !slices.Contains(r.Missing, "velero") || r.Score >= 0.75 {
		t.Errorf("answerability %+v", r)
	}
	for _, c := range w.chat.seen() {
		if len(c.Tools) == 0 {
			t.Errorf("the model was asked to answer")
		}
	}
}

// The same check lets a question the fragments cover through, in
// extractive mode too.
func TestACoveredQuestionIsAnswered(t *testing.T) {
	for _, mode := range []podconfig.AnswerMode{podconfig.AnswerGenerative, podconfig.AnswerExtractive} {
		w := newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence))
		w.runner.Answer.Answerability = &turn.Answerability{Check: podconfig.AnswerabilityCoverage, MinCoverage: 0.75}
		w.runner.Answer.Mode = mode
		events := w.run(staff, routetest.User("How are sync waves ordered?"))
		if done := completed(t, events); done.NotFound {
			t.Errorf("%s: not found; answerability %+v", mode, routetest.OfType(events, turn.EventAnswerability))
		}
	}
}

func TestQuestionCoverageFoldsPluralsAndIgnoresCommonWords(t *testing.T) {
	fragments := []retrieval.Fragment{{Text: "Each policy syncs the clusters.", HeadingPath: []string{"Sync", "Policies"}}}
	score, missing := turn.QuestionCoverage("Which policies sync my cluster with Velero?", fragments)
	if !slices.Equal(missing, []string{"velero"}) || score != 0.75 {
		t.Errorf("coverage %v, missing %v; want 0.75 and [velero]", score, missing)
	}
	if score, _ := turn.QuestionCoverage("How is it?", fragments); score != 1 {
		t.Errorf("a question of common words only: coverage %v, want 1", score)
	}
}

// A Russian question's words are folded by the Russian stemmer and its
// question words left out: an inflected word is covered, a word the
// fragment never names is missing.
func TestQuestionCoverageReadsRussian(t *testing.T) {
	fragments := []retrieval.Fragment{{Text: "Каждая заявка на возмещение проходит два согласования: руководитель команды, затем финансовый отдел.",
		HeadingPath: []string{"Расходы", "Как проходит согласование"}}}
	score, missing := turn.QuestionCoverage("Как проходит согласование заявки на возмещение?", fragments)
	if score != 1 || len(missing) != 0 {
		t.Errorf("coverage %v, missing %v; want 1 and nothing missing", score, missing)
	}
	score, missing = turn.QuestionCoverage("Какая ставка платится за километр на своей машине?", fragments)
	if !slices.Equal(missing, []string{"ставка", "платится", "километр", "машине"}) || score != 0 {
		t.Errorf("coverage %v, missing %v; want 0 and the four content words", score, missing)
	}
}

// A question that joins two things the documents describe apart finds
// each in another fragment, never both in one: coverage is the best
// single fragment's, and its missing words are reported.
func TestQuestionCoverageIsOneFragments(t *testing.T) {
	fragments := []retrieval.Fragment{
		{Text: "The pull request generator filters pull requests by branch and label.", HeadingPath: []string{"Generators", "Pull Request"}},
		{Text: "A draft of the release notes is published first.", HeadingPath: []string{"Releases"}},
	}
	score, missing := turn.QuestionCoverage("How do I filter draft pull requests in the generator?", fragments)
	if score != 0.8 || !slices.Equal(missing, []string{"draft"}) {
		t.Errorf("coverage %v, missing %v; want 0.8 (the generator's fragment) and [draft]", score, missing)
	}
	if score, missing := turn.QuestionCoverage("How do I skip draft pull requests?", nil); score != 0 || len(missing) != 4 {
		t.Errorf("no fragment: coverage %v, missing %v; want 0 and every word", score, missing)
	}
}

// names: a question that names what no packed fragment holds gets the
// not-found wording without an answer call, in English and in Russian
// (a Latin name in a Cyrillic question); one whose names are all packed
// is answered. The report keeps every signal whichever rule decides.
func TestAQuestionNamingWhatNothingPackedHoldsIsNotFound(t *testing.T) {
	cases := []struct {
		question string
		missing  []string
	}{
		{"How do Velero backups order sync waves?", []string{"velero"}},
		{"Как Sync Waves работают вместе с Velero?", []string{"velero"}},
		{"How are Sync Waves ordered?", nil},
		{"В каком порядке применяются Sync Waves?", nil},
	}
	for _, tc := range cases {
		w := newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence))
		w.runner.Answer.Answerability = &turn.Answerability{Check: podconfig.AnswerabilityOff, RequireNames: true}
		events := w.run(staff, routetest.User(tc.question))
		reports := routetest.OfType(events, turn.EventAnswerability)
		if len(reports) != 1 {
			t.Fatalf("%q: answerability events %+v", tc.question, reports)
		}
		r := reports[0].Data.(turn.AnswerabilityReport)
		if !slices.Equal(r.MissingNames, tc.missing) || r.Answerable != (tc.missing == nil) || r.Coverage == 0 {
			t.Errorf("%q: report %+v", tc.question, r)
		}
		if tc.missing != nil && (!slices.Equal(r.Refused, []string{"names"}) || routetest.AnswerOf(events) != routetest.Prompt().NotFound) {
			t.Errorf("%q: refused by %q, client read %q", tc.question, r.Refused, routetest.AnswerOf(events))
		}
		if tc.missing == nil && completed(t, events).NotFound {
			t.Errorf("%q: not found", tc.question)
		}
	}
}

// The model's yes and no are read in Russian too.
func TestTheModelCheckReadsRussianYesAndNo(t *testing.T) {
	w := newFastWorld(t, func(c chatCall) model.Reply {
		switch {
		case len(c.Tools) > 0:
			return searchCall("sync waves")
		case c.Gen.TopLogprobs > 0:
			return model.Reply{Content: "Нет", FirstToken: []model.TokenLogprob{{Token: "Нет", Logprob: math.Log(0.8)}, {Token: "Да", Logprob: math.Log(0.2)}}}
		}
		return model.Reply{Content: "never"}
	})
	withAnswerability(w, 0.5)
	events := w.run(staff, routetest.User("Как упорядочены Sync Waves?"))
	r := routetest.OfType(events, turn.EventAnswerability)[0].Data.(turn.AnswerabilityReport)
	if math.Abs(r.Score-0.2) > 1e-9 || r.Answerable {
		t.Errorf("report %+v: want P(да) 0.2, refused", r)
	}
}
