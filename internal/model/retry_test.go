package model

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeWaits records the waits a policy asks for instead of sleeping.
type fakeWaits struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeWaits) policy() RetryPolicy {
	return RetryPolicy{
		Sleep: func(_ context.Context, d time.Duration) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.waits = append(f.waits, d)
			return nil
		},
		// Full jitter at its ceiling, so waits are predictable.
		Jitter: func(ceiling time.Duration) time.Duration { return ceiling },
	}
}

func (f *fakeWaits) all() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waits...)
}

// scriptedEmbedder answers its first len(statuses) requests with those
// statuses (a Retry-After from retryAfter, if set), then embeddings.
func scriptedEmbedder(t *testing.T, retryAfter string, statuses ...int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(calls.Add(1))
		if n <= len(statuses) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			http.Error(w, `{"error":{"message":"busy","type":"rate_limit"}}`, statuses[n-1])
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","model":"m","data":[{"object":"embedding","index":0,"embedding":[0.5,0.5]}]}`)
	}))
	t.Cleanup(server.Close)
	return server, &calls
}

func TestEmbeddingsHonourRetryAfterOn429(t *testing.T) {
	server, calls := scriptedEmbedder(t, "7", http.StatusTooManyRequests)
	var waits fakeWaits
	e := NewEmbeddings(EmbeddingsConfig{BaseURL: server.URL, Model: "m", Retry: waits.policy()})
	vectors, err := e.Embed(context.Background(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vectors) != 1 || calls.Load() != 2 || e.Retries() != 1 {
		t.Fatalf("vectors %v after %d calls, %d retries", vectors, calls.Load(), e.Retries())
	}
	if got := waits.all(); len(got) != 1 || got[0] != 7*time.Second {
		t.Errorf("waits %v, want the server's 7s", got)
	}
}

func TestEmbeddingsRetry503WithBackoff(t *testing.T) {
	server, calls := scriptedEmbedder(t, "", 503, 503, 503)
	var waits fakeWaits
	e := NewEmbeddings(EmbeddingsConfig{BaseURL: server.URL, Model: "m", Retry: waits.policy()})
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second}
	if got := waits.all(); fmt.Sprint(got) != fmt.Sprint(want) || calls.Load() != 4 || e.Retries() != 3 {
		t.Errorf("waits %v after %d calls, want %v after 4", got, calls.Load(), want)
	}
}

func TestEmbeddingsPastTheBoundSurfaceTheStatus(t *testing.T) {
	server, calls := scriptedEmbedder(t, "", 503, 503, 503, 503)
	var waits fakeWaits
	e := NewEmbeddings(EmbeddingsConfig{BaseURL: server.URL, Model: "m", Retry: waits.policy()})
	_, err := e.Embed(context.Background(), []string{"x"})
	if err == nil || StatusOf(err) != http.StatusServiceUnavailable {
		t.Fatalf("err %v (status %d), want the 503", err, StatusOf(err))
	}
	if calls.Load() != 4 || len(waits.all()) != 3 {
		t.Errorf("%d calls and %d waits, want 4 and 3", calls.Load(), len(waits.all()))
	}
}

func TestRetryAfterIsCappedAndNeverPastTheDeadline(t *testing.T) {
	// An HTTP date an hour ahead is capped at MaxRetryAfter.
	server, _ := scriptedEmbedder(t, time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), 429)
	var waits fakeWaits
	e := NewEmbeddings(EmbeddingsConfig{BaseURL: server.URL, Model: "m", Retry: waits.policy()})
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if got := waits.all(); len(got) != 1 || got[0] != 20*time.Second {
		t.Errorf("waits %v, want the 20s cap", got)
	}

	// A wait that would pass the caller's deadline is not started: the 429
	// surfaces at once.
	server, calls := scriptedEmbedder(t, "10", 429)
	waits = fakeWaits{}
	e = NewEmbeddings(EmbeddingsConfig{BaseURL: server.URL, Model: "m", Retry: waits.policy()})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := e.Embed(ctx, []string{"x"}); StatusOf(err) != http.StatusTooManyRequests {
		t.Fatalf("err %v, want the 429", err)
	}
	if calls.Load() != 1 || len(waits.all()) != 0 {
		t.Errorf("%d calls, waits %v: waited past the deadline", calls.Load(), waits.all())
	}
}

func TestRetryARefusedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var waits fakeWaits
	e := NewEmbeddings(EmbeddingsConfig{BaseURL: "http://" + addr + "/v1", Model: "m", Retry: waits.policy()})
	if _, err := e.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err %v", err)
	}
	if len(waits.all()) != 3 {
		t.Errorf("waits %v, want 3 retries of the refused connection", waits.all())
	}
}

func TestChatRetries429UntilTheBoundThenIsRateLimited(t *testing.T) {
	var calls atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
	}))
	defer server.Close()
	var waits fakeWaits
	chat := NewChat(ChatConfig{BaseURL: server.URL, Model: "m", Retry: waits.policy()})
	_, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{}, nil)
	var modelErr *Error
	if !errors.As(err, &modelErr) || modelErr.Kind != ErrRateLimited || StatusOf(err) != http.StatusTooManyRequests {
		t.Fatalf("err %v, want rate_limited with the 429", err)
	}
	if calls.Load() != 4 || fmt.Sprint(waits.all()) != "[1s 1s 1s]" || chat.Retries() != 3 {
		t.Errorf("%d calls, waits %v, %d retries", calls.Load(), waits.all(), chat.Retries())
	}
}

// A 503 before the stream is retried; a stream that breaks after its
// first delta is not: the caller already has part of the answer.
func TestChatNeverReplaysAStartedStream(t *testing.T) {
	var calls atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"Sync "}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection breaks mid-stream
	}))
	defer server.Close()
	var waits fakeWaits
	chat := NewChat(ChatConfig{BaseURL: server.URL, Model: "m", Retry: waits.policy()})
	var deltas []string
	_, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{}, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	var modelErr *Error
	if !errors.As(err, &modelErr) || modelErr.Kind != ErrUnavailable {
		t.Fatalf("err %v, want unavailable", err)
	}
	if calls.Load() != 2 || fmt.Sprint(deltas) != "[Sync ]" || chat.Retries() != 1 {
		t.Errorf("%d calls, deltas %q, %d retries: want the 503 retried once and the broken stream not", calls.Load(), deltas, chat.Retries())
	}
}
