package retrieval

import (
	"context"
	"fmt"
	"time"
)

// StoreSlots bound the knowledge-store calls (hybrid searches, split
// sections' parts, the cache's checks) one replica runs at once. Past the
// bound a call waits for a slot before its step's deadline starts. Without
// it a burst sends every call at once, all of them slow down together
// until each passes timeouts.search, and the turns end
// knowledge_unavailable; with it the store serves a few at a time and the
// rest queue. The wait is bounded by the turn's own context.
type StoreSlots struct {
	slots chan struct{}
}

// NewStoreSlots bounds the calls in flight to n; n ≤ 0 leaves them
// unbounded (nil).
func NewStoreSlots(n int) *StoreSlots {
	if n <= 0 {
		return nil
	}
	return &StoreSlots{slots: make(chan struct{}, n)}
}

// take waits for a slot and returns its release and how long it waited;
// nil slots never wait.
func (s *StoreSlots) take(ctx context.Context) (release func(), waited time.Duration, err error) {
	if s == nil {
		return func() {}, 0, nil
	}
	select {
	case s.slots <- struct{}{}:
		return s.release, 0, nil
	default:
	}
	ctx, span := stepSpan(ctx, "store queue")
	defer span.End()
	start := time.Now()
	select {
	case s.slots <- struct{}{}:
		return s.release, time.Since(start), nil
	case <-ctx.Done():
		return nil, time.Since(start), fmt.Errorf("waiting for one of the replica's %d knowledge-store slots: %w", cap(s.slots), context.Cause(ctx))
	}
}

func (s *StoreSlots) release() { <-s.slots }

// storeStep is step for a call to the knowledge store: it first takes one
// of the searcher's store slots, outside the step's deadline, and adds the
// wait to *queued.
func storeStep[T any](ctx context.Context, s *Searcher, name string, queued *time.Duration, call func(context.Context) (T, error)) (T, error) {
	release, waited, err := s.Slots.take(ctx)
	*queued += waited
	if err != nil {
		var zero T
		return zero, err
	}
	defer release()
	return step(ctx, name, s.Timeouts.search(), call)
}
