package turn_test

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// claimPattern finds the numbered claims of a grounding judge's prompt.
var claimPattern = regexp.MustCompile(`(?m)^\S+ claim (\d+)\n(.*)$`)

// judgesClaims scripts a grounding judge: each claim of the prompt is
// supported by S1 when supported says so.
func judgesClaims(supported func(claim string) bool) func(chatCall) model.Reply {
	return func(c chatCall) model.Reply {
		var verdicts []string
		for _, m := range claimPattern.FindAllStringSubmatch(c.Messages[len(c.Messages)-1].Content, -1) {
			if supported(m[2]) {
				verdicts = append(verdicts, fmt.Sprintf(`{"claim":%s,"supported":true,"fragment":"S1"}`, m[1]))
			} else {
				verdicts = append(verdicts, fmt.Sprintf(`{"claim":%s,"supported":false,"fragment":""}`, m[1]))
			}
		}
		return model.Reply{Content: `{"verdicts":[` + strings.Join(verdicts, ",") + `]}`}
	}
}

// withJudgeScorer has the world's grounding check ask judge under policy.
func withJudgeScorer(w *fastWorld, policy podconfig.GroundingPolicy, judge turn.ChatModel) *fastWorld {
	w.runner.Answer.Grounding = answer.GroundingSettings{Policy: policy, Scorer: podconfig.GroundingJudge}
	w.runner.Answer.Judge = judge
	return w
}

// With a judge, the answerability check asks it, not the chat model:
// the chat model is asked to search and to answer, nothing else, and the
// judge's tokens are counted apart.
func TestTheAnswerabilityCheckAsksTheJudge(t *testing.T) {
	w := withAnswerability(newFastWorld(t, func(c chatCall) model.Reply {
		if c.Gen.TopLogprobs > 0 {
			t.Error("the chat model was asked the answerability question")
		}
		return searchesThenAnswers("sync waves", groundedSentence)(c)
	}), 0.5)
	judge := &scriptedChat{script: answersWithOdds(0.1, "")}
	w.runner.Answer.Judge = judge
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if got := routetest.AnswerOf(events); got != routetest.Prompt().NotFound {
		t.Errorf("client read %q, want the not-found wording", got)
	}
	asked := judge.seen()
	if len(asked) != 1 || asked[0].Gen.TopLogprobs == 0 || !strings.Contains(asked[0].Messages[len(asked[0].Messages)-1].Content, "yes or no") {
		t.Fatalf("the judge was asked %+v, want the one answerability question", asked)
	}
	if r := routetest.OfType(events, turn.EventAnswerability); len(r) != 1 || math.Abs(r[0].Data.(turn.AnswerabilityReport).Score-0.1) > 0.01 {
		t.Errorf("answerability %+v", r)
	}
	done := completed(t, events)
	if done.JudgeUsage == nil || done.JudgeUsage.PromptTokens != 100 || done.Usage.PromptTokens != 100 {
		t.Errorf("usage %+v, judge %+v: want one call each", done.Usage, done.JudgeUsage)
	}
	if _, ok := done.Timings["judge_answerable"]; !ok {
		t.Errorf("timings %v lack judge_answerable", done.Timings)
	}
}

// A judge that is down fails the answerability check as the judge's
// failure, not the chat model's.
func TestAnAnswerabilityJudgeDownIsNamed(t *testing.T) {
	w := withAnswerability(newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence)), 0.5)
	w.runner.Answer.Judge = failingChat{err: &model.Error{Kind: model.ErrUnavailable, Err: errors.New("judge refused the connection")}}
	got, log := failedTurn(t, w)
	if got.Code != turn.CodeKnowledgeUnavailable || !strings.Contains(log, "judge: answerability") {
		t.Errorf("error %+v, log:\n%s\nwant knowledge_unavailable naming the judge", got, log)
	}
}

// The judge scorer: the claim the judge finds unsupported is withheld by
// strip, though similarity would pass it; the supported one is shown,
// marked with the fragment the judge named. The judge read the question,
// the fragments with their markers and the claims.
func TestTheJudgeScorerDecidesWhatStripShows(t *testing.T) {
	misapplied := "Sync waves are ordered by the wave number [S1]."
	judge := &scriptedChat{script: judgesClaims(func(claim string) bool { return strings.HasPrefix(claim, "Lower waves") })}
	w := withJudgeScorer(newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence+misapplied)), podconfig.GroundingStrip, judge)
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if got := routetest.AnswerOf(events); got != groundedSentence {
		t.Errorf("client read %q, want only %q", got, groundedSentence)
	}
	g := groundings(events)
	if len(g) != 2 || g[0].Status != answer.Supported || g[0].Marker != "S1" || g[0].Score != 1 || !g[1].Withheld || g[1].Score != 0 {
		t.Fatalf("grounding %+v", g)
	}
	calls := judge.seen()
	if len(calls) == 0 {
		t.Fatal("the judge was not asked")
	}
	prompt := calls[0].Messages[1].Content
	for _, want := range []string{"How are sync waves ordered?", " S1 | ", "claim 1\nLower waves are applied first"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the judge's prompt lacks %q:\n%s", want, prompt)
		}
	}
	if calls[0].JSONSchema == nil || calls[0].Gen.Temperature == nil || *calls[0].Gen.Temperature != 0 {
		t.Errorf("the judge's call %+v, want greedy under the verdicts' schema", calls[0].Gen)
	}
	if done := completed(t, events); done.Withheld != 1 || done.JudgeUsage == nil {
		t.Errorf("completed %+v", done)
	}
	for _, c := range w.chat.seen() {
		if c.JSONSchema != nil {
			t.Error("the chat model was asked for verdicts")
		}
	}
}

// A judge that is down, or whose verdict does not parse, fails strip and
// fallback closed, naming the judge; annotate still answers, unchecked.
func TestAFailedJudgeFailsStripAndFallbackClosed(t *testing.T) {
	judges := map[string]turn.ChatModel{
		"down":        failingChat{err: &model.Error{Kind: model.ErrUnavailable, Err: errors.New("judge refused the connection")}},
		"unparseable": &scriptedChat{script: func(chatCall) model.Reply { return model.Reply{Content: "Claim 1 is supported."} }},
		"a claim missing": &scriptedChat{script: func(chatCall) model.Reply {
			return model.Reply{Content: `{"verdicts":[]}`}
		}},
	}
	for name, judge := range judges {
		for _, policy := range []podconfig.GroundingPolicy{podconfig.GroundingStrip, podconfig.GroundingFallback} {
			t.Run(name+"/"+string(policy), func(t *testing.T) {
				w := withJudgeScorer(newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence)), policy, judge)
				got, log := failedTurn(t, w)
				if got.Code != turn.CodeKnowledgeUnavailable || !strings.Contains(log, "judge: ask the grounding judge") &&
					!strings.Contains(log, "judge: the grounding judge's reply") {
					t.Errorf("error %+v, log:\n%s\nwant knowledge_unavailable naming the judge", got, log)
				}
			})
		}
		t.Run(name+"/annotate", func(t *testing.T) {
			w := withJudgeScorer(newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence)), podconfig.GroundingAnnotate, judge)
			events := w.run(staff, routetest.User("How are sync waves ordered?"))
			if got := routetest.AnswerOf(events); got != groundedSentence {
				t.Errorf("client read %q", got)
			}
			if done := completed(t, events); done.GroundingUnchecked != answer.UncheckedFailed || done.GroundedRatio != nil {
				t.Errorf("completed %+v, want grounding_unchecked %s", done, answer.UncheckedFailed)
			}
		})
	}
}

// A route that names the judge scorer without a judge checks nothing it
// cannot: strip fails closed.
func TestTheJudgeScorerWithoutAJudgeFailsClosed(t *testing.T) {
	w := withJudgeScorer(newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence)), podconfig.GroundingStrip, nil)
	if got, log := failedTurn(t, w); got.Code != turn.CodeKnowledgeUnavailable || !strings.Contains(log, "no judge") {
		t.Errorf("error %+v, log:\n%s", got, log)
	}
}
