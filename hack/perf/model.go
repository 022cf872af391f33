package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// scriptedModel is an instant OpenAI-compatible chat model for both
// systems: offered tools, it searches the user's question
// (search_knowledge); otherwise it streams answer word by word. Its cost
// is this process's, not the systems'. Varied, each answer's sentences
// carry the number of the call that wrote them, so no answer repeats.
type scriptedModel struct {
	answer string
	varied bool
	calls  atomic.Int64
}

// answerNow is the answer of one model call.
func (m *scriptedModel) answerNow() string {
	if !m.varied {
		return m.answer
	}
	n := m.calls.Add(1)
	sentences := strings.SplitAfter(m.answer, ". ")
	for i, s := range sentences {
		sentences[i] = fmt.Sprintf("In answer %d, %s%s", n, strings.ToLower(s[:1]), s[1:])
	}
	return strings.Join(sentences, "")
}

type chatRequest struct {
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Tools  []json.RawMessage `json:"tools"`
	Stream bool              `json:"stream"`
}

// lastUser is the text of the request's last user message.
func (r chatRequest) lastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" {
			if s, ok := m.Content.(string); ok {
				return s
			}
		}
	}
	return ""
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var call string
	if len(req.Tools) > 0 {
		args, _ := json.Marshal(map[string]string{"query": req.lastUser()})
		call = string(args)
	}
	if !req.Stream {
		m.whole(w, call)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any) {
		data, _ := json.Marshal(map[string]any{"id": "chatcmpl-perf", "object": "chat.completion.chunk", "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"role": "assistant"}, nil)
	finish := "stop"
	if call != "" {
		finish = "tool_calls"
		send(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_0", "type": "function",
			"function": map[string]any{"name": "search_knowledge", "arguments": call}}}}, nil)
	} else {
		for _, word := range strings.SplitAfter(m.answerNow(), " ") {
			send(map[string]any{"content": word}, nil)
		}
	}
	send(map[string]any{}, finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// whole answers a request that does not stream.
func (m *scriptedModel) whole(w http.ResponseWriter, call string) {
	answer := m.answerNow()
	message := map[string]any{"role": "assistant", "content": answer}
	finish := "stop"
	if call != "" {
		message = map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "call_0", "type": "function",
			"function": map[string]any{"name": "search_knowledge", "arguments": call}}}}
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-perf", "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": len(strings.Fields(answer))}})
}
