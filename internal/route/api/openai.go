package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ragroute/ragroute/internal/model"
)

// What OpenAI clients send and expect, beyond the chat itself: content
// as a list of parts, the developer role, sampling fields, n, stream
// options, the model list, and OpenAI's error shape.

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

// requestError is a request the route refuses, naming the field (OpenAI's
// "param").
type requestError struct {
	param, message string
}

func (e *requestError) Error() string { return e.param + ": " + e.message }

// conversation is the request's messages as the turn takes them: system
// and developer messages are dropped (the route's platform prompt is the
// only instruction layer), text parts are joined, anything else refused.
func (req completionRequest) conversation() ([]model.Message, error) {
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
			return "", &requestError{param + ".content", "not a string: " + err.Error()}
		}
		return text, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", &requestError{param + ".content", "want a string or a list of {\"type\":\"text\",\"text\":…} parts"}
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		if p.Type != "text" {
			return "", &requestError{fmt.Sprintf("%s.content[%d]", param, j),
				fmt.Sprintf("content part type %q is not supported: a route answers text questions from text documents", p.Type)}
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// generation is the sampling a client asked for, checked: n above 1 is
// refused (a route gives one answer), stop takes a string or up to 4.
func (req completionRequest) generation() (model.Generation, error) {
	var g model.Generation
	if req.N != nil && *req.N != 1 {
		return g, &requestError{"n", fmt.Sprintf("n=%d: a route returns exactly one choice", *req.N)}
	}
	switch {
	case req.MaxCompletionTokens != nil:
		g.MaxTokens = *req.MaxCompletionTokens
	case req.MaxTokens != nil:
		g.MaxTokens = *req.MaxTokens
	}
	if req.MaxCompletionTokens != nil || req.MaxTokens != nil {
		if g.MaxTokens < 1 {
			return g, &requestError{"max_tokens", "must be at least 1"}
		}
	}
	if t := req.Temperature; t != nil {
		if *t < 0 || *t > 2 {
			return g, &requestError{"temperature", "must be between 0 and 2"}
		}
		g.Temperature = t
	}
	if stop := strings.TrimSpace(string(req.Stop)); stop != "" && stop != "null" {
		var one string
		if json.Unmarshal(req.Stop, &one) == nil {
			g.Stop = []string{one}
		} else if err := json.Unmarshal(req.Stop, &g.Stop); err != nil || len(g.Stop) > 4 {
			return g, &requestError{"stop", "want a string or a list of at most 4 strings"}
		}
	}
	return g, nil
}

// models lists the route's model: the one a client names in requests.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.authenticate(w, r); !ok {
		return
	}
	entry := map[string]any{"id": s.modelID(), "object": "model", "created": s.started.Unix(), "owned_by": "ragroute"}
	if id := r.PathValue("id"); id != "" {
		if id != s.modelID() {
			apiErrorParam(w, http.StatusNotFound, "model_not_found", "model", fmt.Sprintf("no model %q here; this route serves %q", id, s.modelID()))
			return
		}
		writeJSON(w, entry)
		return
	}
	writeJSON(w, map[string]any{"object": "list", "data": []any{entry}})
}

// modelID is the model name clients use for this route.
func (s *Server) modelID() string {
	if s.ModelID != "" {
		return s.ModelID
	}
	return "ragroute"
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// errorType is OpenAI's error type for a status; SDKs pick their
// exception class from the status, some UIs show the type.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// requestIDHeader carries each response's id; a request that starts a
// turn uses it as the turn id, which the logs name.
const requestIDHeader = "X-Request-Id"

// withRequestID gives every response a fresh id. A caller's own id is not
// taken: a turn id must be unguessable and unique.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(requestIDHeader, newTurnID())
		next.ServeHTTP(w, r)
	})
}

// requestID is the id withRequestID gave this response (a fresh one when
// the handler runs without it, as in tests of one handler).
func requestID(w http.ResponseWriter) string {
	if id := w.Header().Get(requestIDHeader); id != "" {
		return id
	}
	id := newTurnID()
	w.Header().Set(requestIDHeader, id)
	return id
}
