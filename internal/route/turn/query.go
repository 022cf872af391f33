package turn

import (
	"context"
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/model"
)

// The search queries the model writes, each in one short call without
// tools: the condensed follow-up (decide's always policy, agentic's
// start), the rephrased re-search (research.go); and how a written query
// is read back (also the agentic question's parts).

// condense turns the last question into a self-contained query when there
// is history to resolve; a first question is searched as asked.
func (t *turn) condense(ctx context.Context) (string, error) {
	messages := t.in.Messages
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
	return t.writeQuery(ctx, "condense", "Rewrite the user's last question as one self-contained search query. Reply with the query only.",
		transcript.String(), question)
}

// writeQuery asks the model for a search query in one short call without
// tools (stage names its span and timing); fallback when it gives none.
func (t *turn) writeQuery(ctx context.Context, stage, system, user, fallback string) (string, error) {
	if t.engine.Chat == nil {
		return fallback, nil // a route without a model searches as asked
	}
	reply, err := t.callModel(ctx, modelCall{span: stage, stage: stage, messages: []model.Message{
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
