package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// A route told to stop (SIGTERM) keeps answering for its shutdown delay,
// its /readyz failing so its Service drops it, then lets the answers in
// flight finish: a rolling update fails no turn. (Before, the listener
// closed at once and running turns were cancelled: on a real node every
// roll refused connections and cut streams.)
func TestShutdownKeepsServingThenDrainsTheTurnsInFlight(t *testing.T) {
	ctx := context.Background()
	cfg, models := pruneRoute(ctx, t)
	models.ChunkDelay = 200 * time.Millisecond // ~2 s an answer
	ln := listeners{api: listenOnLoopback(t), shutdownDelay: time.Second}
	base := "http://" + ln.api.Addr().String()
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve(serveCtx, cfg, os.Getenv, ln, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	waitOK(t, base+"/readyz")

	answers := make(chan error, 2)
	go func() { answers <- complete(base) }()
	time.Sleep(500 * time.Millisecond) // the first answer is streaming
	stop()
	time.Sleep(200 * time.Millisecond)
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("/readyz within the shutdown delay: %v; want an answer", err)
	}
	body := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "shutdown") {
		t.Errorf("/readyz within the shutdown delay: %d %s; want 503 naming the shutdown", resp.StatusCode, body)
	}
	go func() { answers <- complete(base) }() // a turn the Service still sent
	for range 2 {
		if err := <-answers; err != nil {
			t.Errorf("a turn across the shutdown: %v", err)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve stopped with %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// complete asks through the OpenAI-compatible facade and reads the whole
// stream: an error unless it ends with [DONE] and carries no error.
func complete(base string) error {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"What does prune last do?"}]}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "X-User": "ann", "X-Groups": "staff", "X-Proxy-Secret": "s3cret"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read the stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), "data: [DONE]") || strings.Contains(string(data), `"error"`) {
		return fmt.Errorf("%s: %s", resp.Status, data)
	}
	return nil
}

// A turn that outlasts the drain is cancelled before the drain ends, not
// as the connections close: its stream ends with an error the client
// reads, not a cut connection.
func TestShutdownEndsATurnPastTheDrainWithAnError(t *testing.T) {
	ctx := context.Background()
	cfg, models := pruneRoute(ctx, t)
	models.ChunkDelay = time.Second // ~10 s an answer, past the drain
	ln := listeners{api: listenOnLoopback(t), drain: 2 * time.Second}
	base := "http://" + ln.api.Addr().String()
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve(serveCtx, cfg, os.Getenv, ln, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	waitOK(t, base+"/readyz")

	answer := make(chan error, 1)
	go func() { answer <- complete(base) }()
	time.Sleep(1500 * time.Millisecond) // the answer is streaming
	stop()
	err := <-answer
	if err == nil || !strings.Contains(err.Error(), `"error"`) {
		t.Errorf("a turn past the drain ended with %v, want its stream to end with an error event", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve stopped with %v", err)
	}
}
