package turn

import (
	"context"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
)

// The judge (AnswerSettings.Judge, a QueryRoute's spec.answer.judge) is a
// chat model the route asks to check, not to answer: the answerability
// check's model rule (answerable.go) and the grounding check's judge
// scorer (route/answer's judge.go) ask it through the turn's one
// callModel, so its calls are traced, timed and counted (apart from the
// chat model's tokens) like every other. A failed judge call is the
// judge's DependencyError: strip and fallback show nothing unchecked, and
// the client is not told the chat model failed.

// judgeFailed names the judge as what failed.
func judgeFailed(err error) error {
	return &DependencyError{Dependency: DependencyJudge, Err: err}
}

// groundingJudge is the grounding check's judge for this turn: nil unless
// the route's scorer is judge (then, without a judge, the check fails).
func (t *turn) groundingJudge() *answer.Judge {
	if t.engine.Answer.Grounding.Scorer != podconfig.GroundingJudge || t.engine.Answer.Judge == nil {
		return nil
	}
	return &answer.Judge{Question: t.in.Question(), Call: func(ctx context.Context, p answer.JudgePrompt) (string, error) {
		messages, gen := JudgeRequest(p)
		reply, err := t.callModel(ctx, modelCall{span: "judge_grounding", stage: "judge_grounding", messages: messages, gen: gen, judge: true})
		return reply.Content, err
	}}
}

// JudgeRequest is the chat call a judge prompt makes: its system and user
// messages, greedy, the reply held to the prompt's JSON schema (where the
// server takes response_format json_schema) and its bound. The
// evaluations ask a judge with it too.
func JudgeRequest(p answer.JudgePrompt) ([]model.Message, model.Generation) {
	greedy := 0.0
	gen := model.Generation{Temperature: &greedy, MaxTokens: p.MaxTokens}
	if len(p.Schema) > 0 {
		gen.JSONSchema = &model.JSONSchema{Name: p.SchemaName, Schema: p.Schema}
	}
	return []model.Message{{Role: model.RoleSystem, Content: p.System}, {Role: model.RoleUser, Content: p.User}}, gen
}
