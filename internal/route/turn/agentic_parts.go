package turn

import (
	"context"
	"encoding/json"
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

// partsPrompt asks for the user's own questions, copied with the context
// each needs, not new ones: a 1.5B model asked to write the parts wrote
// questions the user never asked ("What is the purpose of the database
// migration job?") and keywords that drop the words that find a section.
const partsPrompt = "List the questions the user's message asks, at most 3. Copy each from the user's own words, " +
	"and add the words from the rest of the message it needs to be understood alone: the names, settings and error messages it refers to. " +
	"Do not answer them and do not add questions the user did not ask. If the message asks one thing, list only that one question. " +
	`Reply with JSON: {"questions": ["…", "…"]}`

// partsSchema holds the reply to that list: a model that writes the
// questions as prose runs them together on one line, or stops after the
// first.
var partsSchema = &model.JSONSchema{Name: "question_parts", Schema: []byte(`{"type":"object",` +
	`"properties":{"questions":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3}},` +
	`"required":["questions"],"additionalProperties":false}`)}

// questionParts is what the question asks, part by part, as queries to
// search besides the question: none when it asks one thing (the question's
// own search covers it), when the route has no model, or when the call
// fails: the parts only add searches to the question's own, so a model
// server that refuses the schema costs them, not the research.
func (rs *researcher) questionParts(ctx context.Context) []string {
	if rs.engine.Chat == nil {
		return nil
	}
	question := rs.h.question
	reply, err := rs.callModel(ctx, modelCall{span: "parts", stage: "model_parts",
		gen:      model.Generation{MaxTokens: partsMaxTokens, JSONSchema: partsSchema},
		messages: []model.Message{{Role: model.RoleSystem, Content: partsPrompt}, {Role: model.RoleUser, Content: question}}})
	if err != nil {
		if logger := rs.engine.Logger; logger != nil && ctx.Err() == nil {
			logger.Warn("agentic research goes on without the question's parts: the model call failed", "turn", rs.in.ID, "error", err)
		}
		return nil
	}
	return partsOf(reply.Content, question)
}

// partsOf reads the model's list: each question cut as a written query
// is, at most agenticSearchedParts, none that is the question's search or
// an earlier part's again (the harness would reject it). Fewer than two
// parts, or a reply that is not the list, is none.
func partsOf(reply, question string) []string {
	var list struct {
		Questions []string `json:"questions"`
	}
	start, end := strings.Index(reply, "{"), strings.LastIndex(reply, "}")
	if start < 0 || end < start || json.Unmarshal([]byte(reply[start:end+1]), &list) != nil {
		return nil
	}
	seen := map[string]bool{searchKey(question): true}
	var parts []string
	for _, item := range list.Questions {
		q := queryOf(item)
		if q == "" || seen[searchKey(q)] {
			continue
		}
		seen[searchKey(q)] = true
		if parts = append(parts, q); len(parts) == agenticSearchedParts {
			break
		}
	}
	if len(parts) < 2 {
		return nil
	}
	return parts
}
