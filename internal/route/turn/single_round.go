package turn

import (
	"context"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// singleRound is the default mode: decide → retrieve → respond. The chat
// model is offered the tools for ONE round (decide.go), or with the always
// policy the condensed question is searched; a round that finds too
// little, or whose packing the answerability check refuses, is rephrased
// and searched once more (research.go).
type singleRound struct{}

// Play is decide → retrieve → respond.
func (singleRound) Play(ctx context.Context, t *turn) (notFound bool, err error) {
	intent := retrieval.ClassifyIntent(t.in.Question())
	// The conversation goes with the decide call's system prompt and tools.
	w := t.engine.Window
	t.trimHistory(w.Tokens.Count(systemPrompt(t.prompt, intent)) + 4 + w.toolsTokens(t.engine.Search.tools()))
	calls, err := t.decide(ctx, intent)
	if err != nil || len(calls) == 0 {
		return false, err // failed, or answered directly: the text already streamed
	}
	ev, err := t.retrieve(ctx, intent, calls)
	if err != nil {
		return false, err
	}
	// The answerability check decides after the one re-search: a
	// question it refuses is searched once more in other words first.
	if ev.verdict, err = t.check(ctx, ev); err != nil {
		return false, err
	}
	if t.mayReSearch(ev) && (t.weak(ev) || ev.refused()) {
		if ev, err = t.reSearch(ctx, ev); err != nil {
			return false, err
		}
	}
	return t.respond(ctx, ev)
}

// retrieve runs the round's tool calls, up to the cap, and packs what
// they found (mergeFragments), into what is left of the window; the
// retrieval events report it. The results are those of the calls run, the
// first ones of calls.
func (t *turn) retrieve(ctx context.Context, intent retrieval.Intent, calls []model.ToolCall) (evidence, error) {
	results, err := t.runTools(ctx, calls)
	if err != nil {
		return evidence{}, err
	}
	ev := evidence{intent: intent, calls: calls, results: results}
	ev.packing = t.pack(ctx, ev, nil)
	t.emitRetrievals(results, ev.packing)
	return ev, nil
}
