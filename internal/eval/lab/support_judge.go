package lab

import (
	"context"

	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// judgeScorer is the route's grounding judge (grounding.scorer judge)
// over a labelled turn: the evaluation's judge model asked as a turn asks
// it (turn.JudgeRequest), in the check's batches. Its agreement with the
// labels is what a route's answer.judge.calibratedBy should name before
// strip or fallback trust it.
func (a *answersRun) judgeScorer() Judge {
	call := func(ctx context.Context, p answer.JudgePrompt) (string, error) {
		messages, gen := turn.JudgeRequest(p)
		reply, err := a.opts.Judge.Stream(ctx, messages, nil, gen, nil)
		return reply.Content, err
	}
	return func(ctx context.Context, question string, sentences []string, fragments []retrieval.Fragment) ([]answer.Grounding, error) {
		return answer.JudgeSupport(ctx, answer.Judge{Call: call, Question: question}, sentences, fragments)
	}
}
