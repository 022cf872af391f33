package route

import (
	"context"
	"regexp"
	"strings"

	"github.com/ragroute/ragroute/internal/model"
)

// The question's parts. Under searchPolicy always the harness searches the
// question before the model's first step; a question that asks several
// things is then searched as one query, whose best fragments tend to
// answer one of them. So the harness first asks the model, in one short
// call without tools, to list what the question asks, and searches each
// part after the question. Small models split a question well even where
// they drive the tools poorly; a model that drives them goes on from there
// with every part already searched once.

// agenticSearchedParts bounds the parts searched before the model's first step:
// with the question itself they stay below the searches a save needs.
const agenticSearchedParts = 3

// partsMaxTokens bounds the reply: three questions.
const partsMaxTokens = 192

// partsPrompt asks for whole questions, not keywords: a small model's
// keyword queries drop the words that find the section ("After-deployment"
// for "pruned only after all the other resources are healthy").
const partsPrompt = "Split the user's question into the separate questions it asks, at most 3, one per line. " +
	"Write each as a complete question that stands on its own: keep the names, settings and error messages it needs " +
	"from the user's words. If the user asks one thing, write that one question. Write the questions only."

// questionParts is what the question asks, part by part, as queries to
// search besides the question: none when it asks one thing (the question's
// own search covers it) or when the route has no model.
func (r *Runner) questionParts(ctx context.Context, question string, st *turnState) ([]string, error) {
	if r.Chat == nil {
		return nil, nil
	}
	reply, err := r.callModel(ctx, st, modelCall{span: "parts", stage: "model_parts", gen: model.Generation{MaxTokens: partsMaxTokens},
		messages: []model.Message{{Role: model.RoleSystem, Content: partsPrompt}, {Role: model.RoleUser, Content: question}}})
	if err != nil {
		return nil, err
	}
	return partsOf(reply.Content, question), nil
}

// partsOf reads the model's list: one query a line, list markers and
// quotes aside, each cut as a written query is, at most agenticSearchedParts,
// none that is the question's search or an earlier part's again (the
// harness would reject it). Fewer than two parts is none.
func partsOf(reply, question string) []string {
	seen := map[string]bool{normaliseQuery(question): true}
	var parts []string
	for line := range strings.Lines(reply) {
		q := queryOf(listMarker.ReplaceAllString(line, ""))
		if q == "" || seen[normaliseQuery(q)] {
			continue
		}
		seen[normaliseQuery(q)] = true
		if parts = append(parts, q); len(parts) == agenticSearchedParts {
			break
		}
	}
	if len(parts) < 2 {
		return nil
	}
	return parts
}

// listMarker is how a list item may start: "1.", "2)", "-", "*", "•".
var listMarker = regexp.MustCompile(`^\s*(?:\d{1,2}[.)]|[-*•])\s+`)
