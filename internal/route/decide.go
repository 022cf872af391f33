package route

import (
	"context"
	"encoding/json"
	"fmt"
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
func (r *Runner) decide(ctx context.Context, history []model.Message, intent retrieval.Intent, st *turnState) ([]model.ToolCall, error) {
	if r.Policy == podconfig.SearchAlways {
		return r.searchQuestion(ctx, history, st)
	}
	messages := withSystem(systemPrompt(r.Prompt, intent), history)
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
func (r *Runner) searchQuestion(ctx context.Context, history []model.Message, st *turnState) ([]model.ToolCall, error) {
	query, err := r.condense(ctx, history, st)
	if err != nil {
		return nil, err
	}
	arguments, _ := json.Marshal(map[string]string{"query": query})
	return []model.ToolCall{{ID: "call_search", Name: searchToolName, Arguments: string(arguments)}}, nil
}

// condense turns the last question into a self-contained query when there
// is history to resolve; a first question is searched as asked.
func (r *Runner) condense(ctx context.Context, messages []model.Message, st *turnState) (string, error) {
	question := lastUserMessage(messages)
	if len(messages) <= 1 {
		return question, nil
	}
	var transcript strings.Builder
	for _, m := range messages {
		if m.Role == model.RoleUser || m.Role == model.RoleAssistant {
			fmt.Fprintf(&transcript, "%s: %s\n", m.Role, m.Content)
		}
	}
	return r.writeQuery(ctx, "condense", "Rewrite the user's last question as one self-contained search query. Reply with the query only.",
		transcript.String(), question, st)
}

// writeQuery asks the model for a search query in one short call without
// tools (stage names its span and timing); fallback when it gives none.
func (r *Runner) writeQuery(ctx context.Context, stage, system, user, fallback string, st *turnState) (string, error) {
	if r.Chat == nil {
		return fallback, nil // a route without a model searches as asked
	}
	reply, err := r.callModel(ctx, st, modelCall{span: stage, stage: stage, messages: []model.Message{
		{Role: model.RoleSystem, Content: system},
		{Role: model.RoleUser, Content: user},
	}})
	if err != nil {
		return "", err
	}
	if q := queryOf(reply.Content); q != "" {
		return q, nil
	}
	return fallback, nil
}

// maxWrittenQuery bounds a query the model wrote: a small model may write
// a paragraph where one line was asked for.
const maxWrittenQuery = 300

// queryOf is the first non-empty line of a model's reply, unquoted and cut
// to maxWrittenQuery bytes at a word boundary.
func queryOf(reply string) string {
	for _, line := range strings.Split(reply, "\n") {
		q := strings.Trim(strings.TrimSpace(line), "\"'`")
		if q == "" {
			continue
		}
		if len(q) > maxWrittenQuery {
			q = q[:maxWrittenQuery]
			if i := strings.LastIndexByte(q, ' '); i > 0 {
				q = q[:i]
			}
			q = strings.ToValidUTF8(q, "")
		}
		return q
	}
	return ""
}
