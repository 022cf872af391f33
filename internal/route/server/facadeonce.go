package server

import (
	"context"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// completeOnce runs the turn to its end and answers it whole, as one
// chat.completion; a failed turn answers with its code's status and
// advice on retrying.
func (s *Server) completeOnce(ctx context.Context, w http.ResponseWriter, c completionTurn) error {
	observer := s.observeTurn(ctx, c.turn, c.user, "completions")
	collected := newCollector(c.turn.ID)
	s.opts.Runner.Run(ctx, c.turn, func(ev turn.Event) { observer.event(ev); collected.add(ev) })
	c.release() // before the answer, which a client may follow with its next turn
	if collected.err != nil {
		return failed(collected.err.Code, collected.err.Message).withRetryAdvice()
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "chatcmpl-" + c.turn.ID, "object": "chat.completion", "created": time.Now().Unix(), "model": c.model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": collected.content.String()}}},
		"usage":    usageOf(collected.usage),
		"ragroute": collected.ext,
	})
	return nil
}
