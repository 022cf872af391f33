package lab

import (
	"context"
	"sync"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// playFirstTurn plays question as a first turn of user "public" through
// engine, under timeout, and returns its events with when each came and
// how long the turn took: the evaluations' one in-process driver (the
// route's own is the server's, which adds HTTP and admission). A failed
// turn is its error event, not an error.
func playFirstTurn(ctx context.Context, engine *turn.Engine, id, question string, timeout time.Duration) ([]eval.TimedEvent, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var mu sync.Mutex // the grounding check's verdicts arrive from its own goroutine
	var events []eval.TimedEvent
	start := time.Now()
	engine.Run(ctx, turn.Input{
		ID:         id,
		Messages:   []model.Message{{Role: model.RoleUser, Content: question}},
		Principals: []string{"public"},
	}, func(e turn.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, eval.TimedEvent{Event: e, At: time.Since(start)})
	})
	total := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	return events, total
}
