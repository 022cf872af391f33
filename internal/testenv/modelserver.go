package testenv

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ModelServer is a scripted OpenAI-compatible server on loopback: its
// /embeddings answers with HashEmbedder vectors, its /chat/completions
// streams what Chat decides, and its /rerank (at URL, not BaseURL) scores
// documents by the query's words they hold. Requests counts calls.
type ModelServer struct {
	*httptest.Server
	Embedder *HashEmbedder
	Requests atomic.Int64

	mu sync.Mutex
	// Chat scripts the chat model: it sees each request and returns the
	// reply to stream. Set it before the first chat call.
	Chat func(ChatRequest) ChatReply
	// ChatRequests records every chat request, in order.
	ChatRequests []ChatRequest
	// ChunkDelay is slept between streamed chunks.
	ChunkDelay time.Duration
	// refusals answer the next chat requests with an error status
	// instead of the script (RefuseChat).
	refusals     int
	refuseStatus int
}

// RefuseChat answers the next n chat requests with status and a
// Retry-After of 0 s, as a hosted API's rate limit or an overloaded
// server does; the requests after them follow the script.
func (m *ModelServer) RefuseChat(n, status int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refusals, m.refuseStatus = n, status
}

// ChatRequest is what the scripted chat model saw.
type ChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	MaxTokens int `json:"max_tokens"`
	// Logprobs and TopLogprobs ask for the first token's candidates.
	Logprobs    bool     `json:"logprobs"`
	TopLogprobs int      `json:"top_logprobs"`
	Temperature float64  `json:"temperature"`
	Stop        []string `json:"stop"`
	// ResponseFormat is the reply's constraint, when asked for.
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	// Traceparent is the request's W3C trace context header.
	Traceparent string `json:"-"`
}

// ChatReply is what the scripted chat model answers: tool calls, or text
// streamed word by word.
type ChatReply struct {
	Content   string
	ToolCalls []ScriptedToolCall
	// FirstToken are the first token's candidates and their
	// log-probabilities, sent with the first word when the request asks
	// for logprobs.
	FirstToken map[string]float64
}

// ScriptedToolCall is a tool call the scripted model makes.
type ScriptedToolCall struct {
	Name      string
	Arguments string
}

// StartModelServer starts a model server answering with dim-sized vectors.
func StartModelServer(dim int) *ModelServer {
	m, err := StartModelServerOn("127.0.0.1:0", dim)
	if err != nil {
		panic(err) // as httptest.NewServer does when loopback cannot listen
	}
	return m
}

// StartModelServerOn is StartModelServer listening on addr, e.g. a real
// node's bridge address, for pods to reach.
func StartModelServerOn(addr string, dim int) (*ModelServer, error) {
	m := &ModelServer{Embedder: &HashEmbedder{Dim: dim}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", m.embeddings)
	mux.HandleFunc("POST /v1/chat/completions", m.chat)
	mux.HandleFunc("POST /rerank", m.rerank)
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("model server on %s: %w", addr, err)
	}
	m.Server = &httptest.Server{Listener: listener, Config: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	m.Start()
	return m, nil
}

// BaseURL is the OpenAI-style base URL, ending in /v1.
func (m *ModelServer) BaseURL() string { return m.URL + "/v1" }

func (m *ModelServer) embeddings(w http.ResponseWriter, r *http.Request) {
	m.Requests.Add(1)
	var req struct {
		Input []string `json:"input"`
		Model string   `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	vectors, _ := m.Embedder.Embed(r.Context(), req.Input)
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, v := range vectors {
		resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func (m *ModelServer) chat(w http.ResponseWriter, r *http.Request) {
	m.Requests.Add(1)
	var req ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	req.Traceparent = r.Header.Get("Traceparent")
	m.mu.Lock()
	m.ChatRequests = append(m.ChatRequests, req)
	script, delay := m.Chat, m.ChunkDelay
	refuse := m.refusals > 0
	if refuse {
		m.refusals--
	}
	status := m.refuseStatus
	m.mu.Unlock()
	if refuse {
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"refused by the test"}}`, status)
		return
	}
	if script == nil {
		http.Error(w, `{"error":{"message":"no chat script"}}`, http.StatusInternalServerError)
		return
	}
	reply := script(req)
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	sendChoice := func(choice map[string]any) {
		chunk := map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": req.Model,
			"choices": []any{choice}}
		data, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", data)
		if flusher != nil {
			flusher.Flush()
		}
		if delay > 0 {
			select {
			case <-r.Context().Done():
			case <-time.After(delay):
			}
		}
	}
	send := func(delta map[string]any, finish any) {
		sendChoice(map[string]any{"index": 0, "delta": delta, "finish_reason": finish})
	}
	send(map[string]any{"role": "assistant"}, nil)
	for i, call := range reply.ToolCalls {
		// Arguments arrive in two fragments, as real servers split them.
		half := len(call.Arguments) / 2
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": call.Name, "arguments": call.Arguments[:half]}}}}, nil)
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i,
			"function": map[string]any{"arguments": call.Arguments[half:]}}}}, nil)
	}
	first := true
	for _, word := range strings.SplitAfter(reply.Content, " ") {
		if word == "" {
			continue
		}
		choice := map[string]any{"index": 0, "delta": map[string]any{"content": word}, "finish_reason": nil}
		if first && req.Logprobs && reply.FirstToken != nil {
			// Beside the delta, as OpenAI and llama.cpp send them.
			choice["logprobs"] = firstTokenLogprobs(word, reply.FirstToken)
		}
		first = false
		sendChoice(choice)
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	send(map[string]any{}, finish)
	usage, _ := json.Marshal(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": len(strings.Fields(reply.Content)), "total_tokens": 0}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", usage)
}

// firstTokenLogprobs is the logprobs object of a first token and its
// candidates, most likely first.
func firstTokenLogprobs(token string, candidates map[string]float64) map[string]any {
	top := make([]map[string]any, 0, len(candidates))
	for t, lp := range candidates {
		top = append(top, map[string]any{"token": t, "logprob": lp})
	}
	slices.SortFunc(top, func(a, b map[string]any) int { return cmp.Compare(b["logprob"].(float64), a["logprob"].(float64)) })
	return map[string]any{"content": []any{map[string]any{"token": token, "logprob": candidates[token], "top_logprobs": top}}}
}

// Seen returns the requests so far, safe to read while the server runs.
func (m *ModelServer) Seen() []ChatRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ChatRequest{}, m.ChatRequests...)
}

// Forget drops the recorded requests (a long benchmark would otherwise
// measure the recording).
func (m *ModelServer) Forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ChatRequests = nil
}
