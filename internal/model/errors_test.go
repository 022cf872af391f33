package model

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

// statusServer answers every chat call with status and an OpenAI-shaped
// error body.
func statusServer(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"message":"upstream says no","type":"x"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func kindOfCall(t *testing.T, baseURL string) ErrorKind {
	t.Helper()
	chat := NewChat(ChatConfig{BaseURL: baseURL, Model: "m"})
	_, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{}, nil)
	var modelErr *Error
	if !errors.As(err, &modelErr) {
		t.Fatalf("error %v (%T) is not a *model.Error", err, err)
	}
	if !strings.Contains(modelErr.Error(), baseURL) {
		t.Errorf("the full error %q lacks the endpoint the log needs", modelErr)
	}
	return modelErr.Kind
}

func TestChatErrorsSayTheirKind(t *testing.T) {
	cases := []struct {
		name    string
		baseURL string
		want    ErrorKind
	}{
		{"connection refused", testenv.RefusedURL(t), ErrUnavailable},
		{"500", statusServer(t, http.StatusInternalServerError), ErrUnavailable},
		{"503", statusServer(t, http.StatusServiceUnavailable), ErrUnavailable},
		{"429", statusServer(t, http.StatusTooManyRequests), ErrRateLimited},
		{"401", statusServer(t, http.StatusUnauthorized), ErrRefused},
	}
	for _, tc := range cases {
		if got := kindOfCall(t, tc.baseURL); got != tc.want {
			t.Errorf("%s: kind %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A model that stops sending mid-stream fails the call at the idle
// timeout, long before the whole call's timeout, as a timeout.
func TestChatIdleTimeoutEndsAStalledStream(t *testing.T) {
	server := testenv.StartModelServer(8)
	defer server.Close()
	server.Chat = func(testenv.ChatRequest) testenv.ChatReply { return testenv.ChatReply{Content: "never finished"} }
	server.ChunkDelay = time.Minute // the first chunk comes, then nothing
	chat := NewChat(ChatConfig{BaseURL: server.BaseURL(), Model: "m", IdleTimeout: 100 * time.Millisecond})

	start := time.Now()
	_, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{}, nil)
	var modelErr *Error
	if !errors.As(err, &modelErr) || modelErr.Kind != ErrTimeout {
		t.Fatalf("error %v, want a *model.Error of kind timeout", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the stalled call took %s", took) // hang detection only
	}
}

// The idle timeout is between chunks, not over the call: a stream whose
// chunks keep coming finishes however long it takes in all.
func TestChatIdleTimeoutResetsOnEveryChunk(t *testing.T) {
	server := testenv.StartModelServer(8)
	defer server.Close()
	answer := strings.Repeat("word ", 40)
	server.Chat = func(testenv.ChatRequest) testenv.ChatReply { return testenv.ChatReply{Content: answer} }
	server.ChunkDelay = 50 * time.Millisecond // 40 words: about 2 s in all
	chat := NewChat(ChatConfig{BaseURL: server.BaseURL(), Model: "m", IdleTimeout: time.Second})

	reply, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{}, nil)
	if err != nil || reply.Content != answer {
		t.Fatalf("reply %q, error %v", reply.Content, err)
	}
}

// The caller's own cancellation is the caller's, not a model failure.
func TestChatCallerCancellationIsNotAModelError(t *testing.T) {
	server := testenv.StartModelServer(8)
	defer server.Close()
	server.Chat = func(testenv.ChatRequest) testenv.ChatReply { return testenv.ChatReply{Content: "slow"} }
	server.ChunkDelay = time.Minute
	chat := NewChat(ChatConfig{BaseURL: server.BaseURL(), Model: "m"})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()

	_, err := chat.Stream(ctx, []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{}, nil)
	var modelErr *Error
	if errors.As(err, &modelErr) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v (%T), want the caller's deadline", err, err)
	}
}
