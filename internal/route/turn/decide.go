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
func (r *Engine) decide(ctx context.Context, history []model.Message, intent retrieval.Intent, st *turnState) ([]model.ToolCall, error) {
	if r.Policy == podconfig.SearchAlways {
		return r.searchQuestion(ctx, history, st)
	}
	messages := withSystem(systemPrompt(st.prompt, intent), history)
	// A direct answer, too, renders no link the platform prompt lacks.
	links := answer.AllowedLinks{}
	links.AddText(messages[0].Content)
	// Under strip and fallback nothing unchecked reaches the client, and
	// a direct answer has nothing to be checked against: it is held, and
	// the question is searched instead.
	held := r.Grounding.Policy == podconfig.GroundingStrip || r.Grounding.Policy == podconfig.GroundingFallback
	sink := st.delta
	if held {
		sink = func(string) error { return nil }
	}
	pipe := answer.NewPipe(sink, answer.NewLinkGuard(links))
	reply, err := r.callModel(ctx, st, modelCall{span: "decide", stage: "model_decide", messages: messages, tools: r.tools(), gen: st.gen,
		onDelta: pipe.Write})
	if err == nil {
		err = pipe.Flush()
	}
	if err != nil {
		return nil, err
	}
	if held && len(reply.ToolCalls) == 0 && strings.TrimSpace(reply.Content) != "" {
		return r.searchQuestion(ctx, history, st)
	}
	return reply.ToolCalls, nil
}

// searchQuestion is the one search of the question, condensed from the
// conversation when there is one: the always policy's round, and what
// follows a direct answer that may not be shown.
func (r *Engine) searchQuestion(ctx context.Context, history []model.Message, st *turnState) ([]model.ToolCall, error) {
	query, err := r.condense(ctx, history, st)
	if err != nil {
		return nil, err
	}
	arguments, _ := json.Marshal(map[string]string{"query": query})
	return []model.ToolCall{{ID: "call_search", Name: searchToolName, Arguments: string(arguments)}}, nil
}
