package turn

import "github.com/ragroute/ragroute/internal/model"

// The harness's tools as the model is offered them, natively
// (agenticTools) or as JSON actions (agentic_protocol.go).
const (
	agenticSearch   = "search"
	agenticSave     = "save"
	agenticFinalize = "finalize"
)

var (
	agenticSearchTool = toolSpec(agenticSearch, "Search the organisation's documentation. Results are fragments with ids (F1, F2, …). "+
		"A query that repeats an earlier one is rejected: rephrase it.")
	stringList      = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	agenticSaveTool = model.Tool{Name: agenticSave, Description: "Keep the fragments that matter and start a new round that holds only the question and what you saved. " +
		"Allowed after at least 5 searches in the round, keeping at least one fragment.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"fragments": map[string]any{"type": "array", "items": map[string]any{
					"type":       "object",
					"properties": map[string]any{"id": map[string]any{"type": "string"}, "note": map[string]any{"type": "string", "description": "why it matters"}},
					"required":   []string{"id", "note"},
				}},
				"closed": stringList, "open": stringList,
				"next": map[string]any{"type": "string", "description": "what to search next"},
			},
			"required": []string{"fragments", "closed", "open"},
		}}
	agenticFinalizeTool = model.Tool{Name: agenticFinalize, Description: "End the research: rank the fragment ids to answer from, most useful first. " +
		"Rejected while half or more of the question's parts are open, except in the last round.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"fragments": stringList, "closed": stringList, "open": stringList,
			},
			"required": []string{"fragments", "closed", "open"},
		}}
)

// agenticTools are the harness's tools; search is gone once the window
// is too full for it.
func agenticTools(searchBlocked bool) []model.Tool {
	if searchBlocked {
		return []model.Tool{agenticSaveTool, agenticFinalizeTool}
	}
	return []model.Tool{agenticSearchTool, agenticSaveTool, agenticFinalizeTool}
}
