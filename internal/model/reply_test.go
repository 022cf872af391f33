package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// endlessServer streams chunk after chunk, each made by chunk(i), until
// the client hangs up or it has sent limit bytes of them; sent reports
// how many it sent once the handler has returned.
func endlessServer(t *testing.T, limit int, chunk func(i int) string) (baseURL string, sent <-chan int) {
	t.Helper()
	done := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		total := 0
		defer func() { done <- total }()
		for i := 0; total < limit; i++ {
			n, err := fmt.Fprintf(w, "data: %s\n\n", chunk(i))
			if err != nil || r.Context().Err() != nil {
				return
			}
			total += n
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", done
}

// contentChunk is a chat chunk carrying text.
func contentChunk(text string) string {
	b, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk",
		"choices": []map[string]any{{"index": 0, "delta": map[string]any{"content": text}}}})
	return string(b)
}

// toolChunk is a chat chunk carrying a fragment of the tool call at index.
func toolChunk(index int, arguments string) string {
	b, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk",
		"choices": []map[string]any{{"index": 0, "delta": map[string]any{"tool_calls": []map[string]any{{
			"index": index, "id": fmt.Sprint("call-", index), "type": "function",
			"function": map[string]any{"name": "search_knowledge", "arguments": arguments}}}}}}})
	return string(b)
}

// A server that ignores max_tokens and streams on, as text or as tool
// calls at ever more (or absurd) indexes, fails the call with
// invalid_reply naming the bound, and the call hangs up: the server stops
// long before its own limit, and the reply held stays within the bound.
func TestAReplyPastItsBoundsFailsTheCall(t *testing.T) {
	delta := strings.Repeat("x", 64<<10)
	cases := map[string]struct {
		chunk func(i int) string
		bound string
	}{
		"text past MaxReplyBytes":      {func(int) string { return contentChunk(delta) }, "MaxReplyBytes"},
		"arguments past MaxReplyBytes": {func(int) string { return toolChunk(0, delta) }, "MaxReplyBytes"},
		"thousands of tool calls":      {func(i int) string { return toolChunk(i, "{}") }, "MaxToolCalls"},
		"an index of a billion":        {func(int) string { return toolChunk(1e9, "{}") }, "MaxToolCalls"},
	}
	const serverLimit = 2 * MaxReplyBytes
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			baseURL, sent := endlessServer(t, serverLimit, tc.chunk)
			chat := NewChat(ChatConfig{BaseURL: baseURL, Model: "m", Timeout: time.Minute})
			received := 0
			reply, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{MaxTokens: 256},
				func(d string) error { received += len(d); return nil })
			var modelErr *Error
			if !errors.As(err, &modelErr) || modelErr.Kind != ErrInvalidReply || !strings.Contains(err.Error(), tc.bound) {
				t.Fatalf("error %v, want an %s model error naming %s", err, ErrInvalidReply, tc.bound)
			}
			held := len(reply.Content)
			for _, call := range reply.ToolCalls {
				held += len(call.ID) + len(call.Name) + len(call.Arguments)
			}
			if held > MaxReplyBytes || received > MaxReplyBytes || len(reply.ToolCalls) > MaxToolCalls {
				t.Errorf("the reply holds %d bytes and %d tool calls, the caller heard %d bytes", held, len(reply.ToolCalls), received)
			}
			select {
			case n := <-sent:
				if n >= serverLimit {
					t.Errorf("the server sent all of its %d bytes: the call never hung up", n)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the server still streams 30 s after the call failed")
			}
		})
	}
}
