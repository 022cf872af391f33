package model

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// echoedPrompt is an error body a model server might send: its reason
// first, then the whole prompt (the fragments a turn sent) echoed back.
func echoedPrompt() string {
	return `{"error":{"message":"prompt too long: ` + strings.Repeat("fragment text ", 80<<10) + `SECRET-TAIL"}}`
}

// bigErrorServer answers every call with status and echoedPrompt.
func bigErrorServer(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(echoedPrompt()))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// cappedError fails unless err keeps the upstream's reason and the
// status, and at most MaxErrorBodyBytes of the body, marked as cut.
func cappedError(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	msg := err.Error()
	if len(msg) > MaxErrorBodyBytes+512 || strings.Contains(msg, "SECRET-TAIL") ||
		!strings.Contains(msg, "prompt too long") || !strings.Contains(msg, "(truncated)") {
		t.Errorf("%s: the error (%d bytes) is not the body's prefix marked truncated: %.600s", what, len(msg), msg)
	}
}

func TestUpstreamErrorBodiesAreCutToAPrefix(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		baseURL := bigErrorServer(t, status)
		chat := NewChat(ChatConfig{BaseURL: baseURL, Model: "m", Retry: RetryPolicy{MaxRetries: -1}})
		_, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{}, nil)
		cappedError(t, "chat "+http.StatusText(status), err)
		var modelErr *Error
		if want := map[int]ErrorKind{400: ErrRefused, 500: ErrUnavailable, 503: ErrUnavailable}[status]; !errors.As(err, &modelErr) || modelErr.Kind != want {
			t.Errorf("chat %d: %v, want kind %s", status, err, want)
		}
		if StatusOf(err) != status {
			t.Errorf("chat %d: StatusOf says %d", status, StatusOf(err))
		}

		embeddings := NewEmbeddings(EmbeddingsConfig{BaseURL: baseURL, Model: "m", Retry: RetryPolicy{MaxRetries: -1}})
		_, err = embeddings.Embed(context.Background(), []string{"x"})
		cappedError(t, "embeddings "+http.StatusText(status), err)
	}
}

// A server may also fail inside a 200 stream, with an error event after
// some chunks: its message is cut as an error answer's body is.
func TestErrorEventsInAStreamAreCutToAPrefix(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"Partly"}}]}` + "\n\n"))
		_, _ = w.Write([]byte("data: " + echoedPrompt() + "\n\n"))
	}))
	t.Cleanup(srv.Close)
	chat := NewChat(ChatConfig{BaseURL: srv.URL + "/v1", Model: "m", Retry: RetryPolicy{MaxRetries: -1}})
	var heard string
	_, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{},
		func(d string) error { heard += d; return nil })
	if heard != "Partly" {
		t.Errorf("the chunk before the error event: heard %q", heard)
	}
	cappedError(t, "error event in a stream", err)
	var modelErr *Error
	if !errors.As(err, &modelErr) || modelErr.Kind != ErrUnavailable {
		t.Errorf("error event: %v, want kind %s", err, ErrUnavailable)
	}
}

func TestErrorBodyPrefixKeepsShortBodiesWhole(t *testing.T) {
	if got := ErrorBodyPrefix(strings.NewReader("model not found")); got != "model not found" {
		t.Errorf("short body %q", got)
	}
	exact := strings.Repeat("a", MaxErrorBodyBytes)
	if got := ErrorBodyPrefix(strings.NewReader(exact)); got != exact {
		t.Errorf("a body of exactly the limit was marked cut: %q", got)
	}
	// A rune cut at the limit is dropped, not split.
	split := strings.Repeat("a", MaxErrorBodyBytes-1) + "é and more"
	if got := ErrorBodyPrefix(strings.NewReader(split)); got != strings.Repeat("a", MaxErrorBodyBytes-1)+truncatedMark {
		t.Errorf("cut inside a rune: %q", got)
	}
}
