package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/route"
)

// completeStream streams the turn as chat.completion.chunk events: the
// role, each delta, the last chunk with the route's extension (and usage
// when asked), then [DONE]. A failed turn's last data line is its error in
// OpenAI's shape: the status was sent long before.
func (s *Server) completeStream(ctx context.Context, w http.ResponseWriter, c completionTurn) error {
	flusher, err := startSSE(w)
	if err != nil {
		return err
	}
	out := chunkWriter{w: w, flusher: flusher, id: "chatcmpl-" + c.turn.ID, created: time.Now().Unix(), model: c.model}
	out.chunk(map[string]any{"role": "assistant"}, nil, nil)
	// The turn runs beside this writer so that, while nothing else is
	// sent (the model reads the window, a search runs), an SSE comment
	// every KeepAlive keeps idle-timeout proxies from cutting the stream.
	// SSE clients, OpenAI SDKs among them, skip comments.
	events := make(chan route.Event, 16)
	go func() {
		defer close(events)
		s.opts.Runner.Run(ctx, c.turn, func(ev route.Event) { events <- ev })
	}()
	observer := s.observeTurn(c.turn.ID, c.user, "completions")
	collected := newCollector(c.turn.ID)
	keepAlive := newIdleTicker(s.opts.Limits.KeepAlive)
	defer keepAlive.stop()
	for running := true; running; {
		select {
		case ev, ok := <-events:
			if !ok {
				running = false
				break
			}
			observer.event(ev)
			collected.add(ev)
			if d, ok := ev.Data.(route.Delta); ok {
				out.chunk(map[string]any{"content": d.Text}, nil, nil)
				keepAlive.reset()
			}
		case <-keepAlive.c:
			_, _ = io.WriteString(w, ": keep-alive\n\n")
			flusher.Flush()
		}
	}
	c.release() // before the last chunk, which a client may follow with its next turn
	if collected.err != nil {
		out.data(failed(collected.err.Code, collected.err.Message).body())
	} else {
		out.chunk(map[string]any{}, "stop", map[string]any{"ragroute": collected.ext})
		if c.includeUsage {
			// As OpenAI: one more chunk, with no choices, only when asked.
			out.data(map[string]any{"id": out.id, "object": "chat.completion.chunk", "created": out.created,
				"model": out.model, "choices": []any{}, "usage": usageOf(collected.usage)})
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
	return nil
}

// chunkWriter writes one streamed completion's data lines.
type chunkWriter struct {
	w       io.Writer
	flusher http.Flusher
	id      string
	created int64
	model   string
}

// chunk sends one chat.completion.chunk with one choice, and extra
// fields beside it, at once.
func (cw chunkWriter) chunk(delta map[string]any, finish any, extra map[string]any) {
	body := map[string]any{"id": cw.id, "object": "chat.completion.chunk", "created": cw.created, "model": cw.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	for k, v := range extra {
		body[k] = v
	}
	cw.data(body)
	cw.flusher.Flush()
}

// data writes v as one data line; the caller flushes.
func (cw chunkWriter) data(v any) {
	data, _ := json.Marshal(v)
	fmt.Fprintf(cw.w, "data: %s\n\n", data)
}
