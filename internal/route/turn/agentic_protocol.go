package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// Small models rarely make native tool calls: Qwen2.5-Coder-1.5B writes
// "you can call the search function with …" as prose, with or without
// tool_choice, and servers without a tool parser hand a call back as text.
// But under a JSON schema (response_format) the same model answers a
// clean {"tool": "search", "query": "…"}. So the harness takes a step's
// calls from wherever the model put them: native tool calls, calls written
// in its text, or one JSON action per step under a schema.

// harnessProtocol is how one agentic turn gets the model's tool calls.
type harnessProtocol struct {
	// json: every step is one JSON action under actionSchema, no tools
	// offered (toolProtocol json, or auto after a reply without a call).
	json bool
	// auto switches to json after a native reply without a call.
	auto bool
	// nudged: the turn's one nudge after a reply without a call is spent.
	nudged bool
}

func newHarnessProtocol(p podconfig.ToolProtocol) *harnessProtocol {
	return &harnessProtocol{json: p == podconfig.ToolProtocolJSON, auto: p == "" || p == podconfig.ToolProtocolAuto}
}

// harnessStep is one model reply read as tool calls.
type harnessStep struct {
	content string
	calls   []model.ToolCall
	// native: the calls are the model's own tool calls, answered by tool
	// messages; calls read from the text are answered in user messages
	// (no chat template accepts a tool message for a call it never made).
	native bool
}

// assistant is the step as the window keeps it: the model's text (its
// reasoning between steps) with its calls. Calls without text (the
// harness's own searches under JSON actions) are written as the JSON
// actions the model would have written: a chat template refuses an
// assistant message with neither text nor tool calls.
func (s harnessStep) assistant() model.Message {
	m := model.Message{Role: model.RoleAssistant, Content: s.content}
	switch {
	case s.native:
		m.ToolCalls = s.calls
	case m.Content == "":
		actions := make([]string, 0, len(s.calls))
		for _, c := range s.calls {
			fields := map[string]any{}
			_ = json.Unmarshal([]byte(c.Arguments), &fields)
			fields["tool"] = c.Name
			action, _ := json.Marshal(fields)
			actions = append(actions, string(action))
		}
		m.Content = strings.Join(actions, "\n")
	}
	return m
}

// result is the harness's answer to call, as the window keeps it.
func (s harnessStep) result(call model.ToolCall, text string) model.Message {
	if s.native {
		return model.Message{Role: model.RoleTool, ToolCallID: call.ID, Content: text}
	}
	return model.Message{Role: model.RoleUser, Content: "Result of " + call.Name + ": " + text}
}

// ask makes one research step: a model call, its reply read as tool
// calls (none when the model only wrote text).
func (rs *researcher) ask(ctx context.Context, messages []model.Message) (harnessStep, error) {
	p, searchBlocked := rs.h.protocol, rs.searchBlocked(messages)
	c := modelCall{span: "research", stage: "model_research", messages: messages}
	if p.json {
		c.gen.JSONSchema = actionSchema(searchBlocked)
	} else {
		c.tools = agenticTools(searchBlocked)
	}
	reply, err := rs.callModel(ctx, c)
	if err != nil {
		return harnessStep{}, err
	}
	if len(reply.ToolCalls) > 0 && !p.json {
		return harnessStep{content: reply.Content, calls: reply.ToolCalls, native: true}, nil
	}
	return harnessStep{content: reply.Content, calls: callsInText(reply.Content)}, nil
}

// harnessNudge is what the model is told after a reply without a call.
const harnessNudge = "Do not answer yet: research first. Call one tool now: search, save or finalize."

// jsonNudge is the nudge once the turn has switched to JSON actions.
const jsonNudge = "Do not answer yet: research first. Reply with one JSON action now: search, save or finalize."

// retry decides what follows a step without a call: under auto the turn
// switches to JSON actions (the system message says how) and asks again;
// otherwise the turn's one nudge asks again. It returns the messages to
// ask with, and false when the research must finalize instead.
func (p *harnessProtocol) retry(messages []model.Message, step harnessStep, system func(json bool) string) ([]model.Message, bool) {
	nudge := harnessNudge
	switch {
	case p.auto && !p.json:
		p.json, nudge = true, jsonNudge
		messages[0].Content = system(true)
	case p.nudged:
		return messages, false
	case p.json:
		nudge = jsonNudge
	}
	p.nudged = true
	if strings.TrimSpace(step.content) != "" { // an empty reply leaves nothing to keep, and no template takes it
		messages = append(messages, step.assistant())
	}
	return append(messages, model.Message{Role: model.RoleUser, Content: nudge}), true
}

// actionSchema is the JSON schema of one action: search (unless the
// window blocks it), save or finalize, with their arguments.
func actionSchema(searchBlocked bool) *model.JSONSchema {
	list := map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	action := func(tool string, properties map[string]any, required ...string) map[string]any {
		properties["tool"] = map[string]any{"const": tool}
		return map[string]any{"type": "object", "properties": properties, "required": append([]string{"tool"}, required...)}
	}
	var actions []any
	if !searchBlocked {
		actions = append(actions, action(agenticSearch, map[string]any{"query": map[string]any{"type": "string"}}, "query"))
	}
	actions = append(actions,
		action(agenticSave, map[string]any{
			"fragments": map[string]any{"type": "array", "items": map[string]any{"type": "object",
				"properties": map[string]any{"id": map[string]any{"type": "string"}, "note": map[string]any{"type": "string"}},
				"required":   []string{"id", "note"}}},
			"closed": list, "open": list, "next": map[string]any{"type": "string"},
		}, "fragments", "closed", "open"),
		action(agenticFinalize, map[string]any{"fragments": list, "closed": list, "open": list}, "fragments", "closed", "open"))
	schema, _ := json.Marshal(map[string]any{"anyOf": actions})
	return &model.JSONSchema{Name: "research_action", Schema: schema}
}

// jsonActionRules tells the model the JSON actions (toolProtocol json).
const jsonActionRules = "Reply with exactly one JSON object, the action you take now:\n" +
	`{"tool": "search", "query": "…"}` + "\n" +
	`{"tool": "save", "fragments": [{"id": "F1", "note": "why it matters"}], "closed": ["parts answered"], "open": ["parts still open"], "next": "what to search next"}` + "\n" +
	`{"tool": "finalize", "fragments": ["F1", "F2"], "closed": ["parts answered"], "open": ["parts still open"]}` + "\n" +
	"The result of each action comes back in the next message."

// The shapes a call written in text takes: Hermes' <tool_call> blocks
// (Qwen's template), fenced JSON, or a bare JSON object.
var (
	hermesCall = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*</tool_call>`)
	fencedJSON = regexp.MustCompile("(?s)```(?:json)?\\s*(\\{.*?\\})\\s*```")
)

// callsInText reads the tool calls a model wrote in its text: each a JSON
// object naming a harness tool, as {"name": t, "arguments": {…}} or
// {"tool": t, …arguments}. Text that holds none gives none.
func callsInText(text string) []model.ToolCall {
	var candidates []string
	for _, m := range hermesCall.FindAllStringSubmatch(text, -1) {
		candidates = append(candidates, m[1])
	}
	if len(candidates) == 0 {
		for _, m := range fencedJSON.FindAllStringSubmatch(text, -1) {
			candidates = append(candidates, m[1])
		}
	}
	if trimmed := strings.TrimSpace(text); len(candidates) == 0 && strings.HasPrefix(trimmed, "{") {
		candidates = append(candidates, trimmed)
	}
	var calls []model.ToolCall
	for _, c := range candidates {
		if call, ok := callOf(c); ok {
			call.ID = fmt.Sprintf("text_%d", len(calls))
			calls = append(calls, call)
		}
	}
	return calls
}

// callOf reads one JSON object as a harness tool call.
func callOf(object string) (model.ToolCall, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(object), &fields) != nil {
		return model.ToolCall{}, false
	}
	var name string
	if raw, ok := fields["name"]; ok {
		if json.Unmarshal(raw, &name) != nil {
			return model.ToolCall{}, false
		}
		args := fields["arguments"]
		if len(args) > 0 && args[0] == '"' { // arguments as a JSON string, as the API sends them
			var inner string
			if json.Unmarshal(args, &inner) != nil {
				return model.ToolCall{}, false
			}
			args = json.RawMessage(inner)
		}
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return model.ToolCall{Name: name, Arguments: string(args)}, isHarnessTool(name)
	}
	if json.Unmarshal(fields["tool"], &name) != nil {
		return model.ToolCall{}, false
	}
	delete(fields, "tool")
	args, _ := json.Marshal(fields)
	return model.ToolCall{Name: name, Arguments: string(args)}, isHarnessTool(name)
}

func isHarnessTool(name string) bool {
	return name == agenticSearch || name == agenticSave || name == agenticFinalize
}
