package turn

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// decide is the round's tool calls. The model is offered the tools and
// either calls them or answers directly (its text streams through, and no
// calls come back). With the always policy nothing is offered: the search
// runs on the question, condensed from the conversation when there is one.
func (t *turn) decide(ctx context.Context, intent retrieval.Intent) ([]model.ToolCall, error) {
	if t.engine.Search.Policy == podconfig.SearchAlways {
		return t.searchQuestion(ctx)
	}
	messages := withSystem(systemPrompt(t.prompt, intent), t.in.Messages)
	// A direct answer, too, renders no link the platform prompt lacks.
	links := answer.AllowedLinks{}
	links.AddText(messages[0].Content)
	// Under strip and fallback nothing unchecked reaches the client, and
	// a direct answer has nothing to be checked against: it is held, and
	// the question is searched instead.
	policy := t.engine.Answer.Grounding.Policy
	held := policy == podconfig.GroundingStrip || policy == podconfig.GroundingFallback
	sink := t.delta
	if held {
		sink = func(string) error { return nil }
	}
	pipe := answer.NewPipe(sink, answer.NewLinkGuard(links))
	reply, err := t.callModel(ctx, modelCall{span: "decide", stage: "model_decide", messages: messages, tools: t.engine.Search.tools(),
		gen: t.in.Generation, onDelta: pipe.Write})
	if err == nil {
		err = pipe.Flush()
	}
	if err != nil {
		return nil, err
	}
	if held && len(reply.ToolCalls) == 0 && strings.TrimSpace(reply.Content) != "" {
		return t.searchQuestion(ctx)
	}
	return reply.ToolCalls, nil
}

// searchQuestion is the one search of the question, condensed from the
// conversation when there is one: the always policy's round, and what
// follows a direct answer that may not be shown.
func (t *turn) searchQuestion(ctx context.Context) ([]model.ToolCall, error) {
	query, err := t.condense(ctx)
	if err != nil {
		return nil, err
	}
	arguments, _ := json.Marshal(map[string]string{"query": query})
	return []model.ToolCall{{ID: "call_search", Name: searchToolName, Arguments: string(arguments)}}, nil
}
