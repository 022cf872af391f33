package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// completeStream streams the turn as chat.completion.chunk events: the
// role, each delta, the last chunk with the route's extension (and usage
// when asked), then [DONE]. A failed turn's last data line is its error in
// OpenAI's shape: the status was sent long before.
func (s *Server) completeStream(ctx context.Context, w http.ResponseWriter, c completionTurn) error {
	stream, err := startSSE(w, s.opts.Limits.StreamWriteTimeout)
	if err != nil {
		return err
	}
	// A send to a client that stopped reading fails at its deadline, and
	// the sends after it at once: the turn runs to its end, unread.
	out := chunkWriter{stream: stream, id: "chatcmpl-" + c.turn.input.ID, created: time.Now().Unix(), model: c.model}
	out.chunk(map[string]any{"role": "assistant"}, nil, nil)
	// The turn plays beside this writer so that, while nothing else is
	// sent (the model reads the window, a search runs), an SSE comment
	// every KeepAlive keeps idle-timeout proxies from cutting the stream.
	// SSE clients, OpenAI SDKs among them, skip comments.
	events := make(chan turn.Event, 16)
	var outcome *turn.Outcome // set before events closes
	go func() {
		defer close(events)
		outcome = c.turn.drive(ctx, func(_ context.Context, ev turn.Event) error { events <- ev; return nil })
	}()
	keepAlive := newIdleTicker(s.opts.Limits.KeepAlive)
	defer keepAlive.stop()
	for running := true; running; {
		select {
		case ev, ok := <-events:
			if !ok {
				running = false
				break
			}
			if d, ok := ev.Data.(turn.Delta); ok {
				out.chunk(map[string]any{"content": d.Text}, nil, nil)
				keepAlive.reset()
			}
		case <-keepAlive.c:
			_ = stream.send(func(w io.Writer) { _, _ = io.WriteString(w, ": keep-alive\n\n") })
		}
	}
	// The driver gave the turn's slot back before its final event: a
	// client may follow the last chunk with its next turn.
	_ = stream.send(func(w io.Writer) {
		if outcome.Failed != nil {
			out.data(w, turnFailed(*outcome.Failed).body())
		} else {
			out.data(w, out.body(map[string]any{}, "stop", map[string]any{"ragroute": extensionOf(c.turn.input.ID, outcome)}))
			if c.includeUsage {
				// As OpenAI: one more chunk, with no choices, only when asked.
				out.data(w, map[string]any{"id": out.id, "object": "chat.completion.chunk", "created": out.created,
					"model": out.model, "choices": []any{}, "usage": usageOf(outcome)})
			}
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	return nil
}

// chunkWriter writes one streamed completion's data lines.
type chunkWriter struct {
	stream  *sseStream
	id      string
	created int64
	model   string
}

// chunk sends one chat.completion.chunk with one choice, and extra
// fields beside it, at once.
func (cw chunkWriter) chunk(delta map[string]any, finish any, extra map[string]any) {
	_ = cw.stream.send(func(w io.Writer) { cw.data(w, cw.body(delta, finish, extra)) })
}

// body is a chat.completion.chunk with one choice, and extra fields.
func (cw chunkWriter) body(delta map[string]any, finish any, extra map[string]any) map[string]any {
	body := map[string]any{"id": cw.id, "object": "chat.completion.chunk", "created": cw.created, "model": cw.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// data writes v as one data line.
func (cw chunkWriter) data(w io.Writer, v any) {
	data, _ := json.Marshal(v)
	fmt.Fprintf(w, "data: %s\n\n", data)
}
