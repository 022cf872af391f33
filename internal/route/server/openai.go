package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ragroute/ragroute/internal/model"
)

// What OpenAI clients send, beyond the chat itself: content as a list of
// parts, the developer role, sampling fields, n, stream options. The model
// list is models.go, OpenAI's error shape errors.go.

// completionRequest is the part of an OpenAI chat completion request a
// route reads; other fields are ignored, as OpenAI clients send many.
type completionRequest struct {
	Model         string          `json:"model"`
	Messages      []openAIMessage `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	Stop                json.RawMessage `json:"stop"`
	N                   *int            `json:"n"`

	// What check keeps: the conversation as the turn takes it, and the
	// sampling asked for.
	messages   []model.Message
	generation model.Generation
}

func (*completionRequest) format() bodyFormat {
	// Not strict: OpenAI clients send fields a route ignores.
	return bodyFormat{lenient: true, notJSON: "the body is not an OpenAI chat completion request: "}
}

func (req *completionRequest) check(limits Limits) error {
	messages, err := req.conversation()
	if err != nil {
		return err
	}
	generation, err := req.sampling()
	if err != nil {
		return err
	}
	if err := checkMessages(messages, limits); err != nil {
		return &apiError{Status: http.StatusBadRequest, Code: "bad_messages", Param: "messages", Message: err.Error()}
	}
	req.messages, req.generation = messages, generation
	return nil
}

// openAIMessage is a message as OpenAI clients send it: content is a
// string, or a list of parts.
type openAIMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

// contentPart is one part of a message's content.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// badRequest refuses a request for its field param (OpenAI's "param").
func badRequest(param, message string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: "bad_request", Param: param, Message: param + ": " + message}
}

// conversation is the request's messages as the turn takes them: system
// and developer messages are dropped (the route's platform prompt is the
// only instruction layer), text parts are joined, anything else refused.
func (req *completionRequest) conversation() ([]model.Message, error) {
	var out []model.Message
	for i, m := range req.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		if m.Role == model.RoleSystem || m.Role == "developer" {
			continue
		}
		text, err := messageText(m.Content, param)
		if err != nil {
			return nil, err
		}
		msg := model.Message{Role: m.Role, Content: text, ToolCallID: m.ToolCallID}
		if len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" && string(m.ToolCalls) != "[]" {
			// checkMessages refuses it, naming the message.
			msg.ToolCalls = []model.ToolCall{{}}
		}
		out = append(out, msg)
	}
	return out, nil
}

// messageText is a message's content as text: a string, or its text
// parts joined by newlines.
func messageText(raw json.RawMessage, param string) (string, error) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return "", nil
	}
	if trimmed[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", badRequest(param+".content", "not a string: "+err.Error())
		}
		return text, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest(param+".content", "want a string or a list of {\"type\":\"text\",\"text\":…} parts")
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		if p.Type != "text" {
			return "", badRequest(fmt.Sprintf("%s.content[%d]", param, j),
				fmt.Sprintf("content part type %q is not supported: a route answers text questions from text documents", p.Type))
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// sampling is the generation a client asked for, checked: n above 1 is
// refused (a route gives one answer), stop takes a string or up to 4.
func (req *completionRequest) sampling() (model.Generation, error) {
	var g model.Generation
	if req.N != nil && *req.N != 1 {
		return g, badRequest("n", fmt.Sprintf("n=%d: a route returns exactly one choice", *req.N))
	}
	switch {
	case req.MaxCompletionTokens != nil:
		g.MaxTokens = *req.MaxCompletionTokens
	case req.MaxTokens != nil:
		g.MaxTokens = *req.MaxTokens
	}
	if req.MaxCompletionTokens != nil || req.MaxTokens != nil {
		if g.MaxTokens < 1 {
			return g, badRequest("max_tokens", "must be at least 1")
		}
	}
	if t := req.Temperature; t != nil {
		if *t < 0 || *t > 2 {
			return g, badRequest("temperature", "must be between 0 and 2")
		}
		g.Temperature = t
	}
	if stop := strings.TrimSpace(string(req.Stop)); stop != "" && stop != "null" {
		var one string
		if json.Unmarshal(req.Stop, &one) == nil {
			g.Stop = []string{one}
		} else if err := json.Unmarshal(req.Stop, &g.Stop); err != nil || len(g.Stop) > 4 {
			return g, badRequest("stop", "want a string or a list of at most 4 strings")
		}
	}
	return g, nil
}
