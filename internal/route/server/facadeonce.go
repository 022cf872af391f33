package server

import (
	"context"
	"net/http"
	"time"
)

// completeOnce plays the turn to its end and answers it whole, as one
// chat.completion; a failed turn answers with its code's status and
// advice on retrying.
func (s *Server) completeOnce(ctx context.Context, w http.ResponseWriter, c completionTurn) error {
	outcome := c.turn.drive(ctx, nil)
	if outcome.Failed != nil {
		return turnFailed(*outcome.Failed).withRetryAdvice()
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "chatcmpl-" + c.turn.input.ID, "object": "chat.completion", "created": time.Now().Unix(), "model": c.model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": outcome.Answer()}}},
		"usage":    usageOf(outcome),
		"ragroute": extensionOf(c.turn.input.ID, outcome),
	})
	return nil
}
