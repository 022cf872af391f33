package knowledge

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Reads of one shape (for a search: its primitive, filter and candidates;
// for a parts lookup or a cache check: its ACL filter) that arrive while a
// call of that shape is in flight wait together and go as one Milvus call:
// a search with several query vectors (nq), a query for the union of the
// rows asked. A call's fixed cost is paid once for all of them: Milvus
// Lite walks every row once per call whatever it asks. One at a time
// nothing waits (docs/performance.md, "Coalesced searches").
const (
	// callsPerShape is how many calls of one shape run at once before
	// the next ones wait to go together. One: a second call beside it
	// is not served sooner by a store that serves its calls together
	// (Milvus Lite); it waits for one call at most, then shares the next.
	callsPerShape = 1
	// maxQueriesPerCall bounds how many reads one call serves.
	maxQueriesPerCall = 16
)

// coalescer runs each shape's reads, at most callsPerShape calls at once;
// reads that arrive past that wait in one batch. run makes one call of a
// shape for the queries, returning one result per query, in order.
type coalescer[Shape comparable, Query, Result any] struct {
	run func(ctx context.Context, shape Shape, queries []Query) ([]Result, error)

	mu       sync.Mutex
	inFlight map[Shape]int
	waiting  map[Shape][]*batch[Shape, Query, Result]
}

func newCoalescer[Shape comparable, Query, Result any](
	run func(ctx context.Context, shape Shape, queries []Query) ([]Result, error)) *coalescer[Shape, Query, Result] {
	return &coalescer[Shape, Query, Result]{run: run, inFlight: map[Shape]int{}, waiting: map[Shape][]*batch[Shape, Query, Result]{}}
}

// batch is the reads of one shape that go in one call.
type batch[Shape comparable, Query, Result any] struct {
	shape   Shape
	queries []Query
	// first is the first member's context: the call keeps its values
	// (the trace) but not its cancellation.
	first context.Context
	// deadline is the latest member's; unbounded when a member has none.
	deadline  time.Time
	unbounded bool
	// members still waiting; when the last one leaves, the call is not
	// made, or is cancelled.
	members int
	started bool
	cancel  context.CancelFunc

	done    chan struct{}
	results []Result
	err     error
}

// do runs query in a call of shape and returns its result.
func (c *coalescer[Shape, Query, Result]) do(ctx context.Context, shape Shape, query Query) (Result, error) {
	c.mu.Lock()
	if c.inFlight[shape] < callsPerShape && len(c.waiting[shape]) == 0 {
		c.inFlight[shape]++
		c.mu.Unlock()
		results, err := c.run(ctx, shape, []Query{query})
		c.finished(shape)
		return resultAt(results, err, 0)
	}
	b, index := c.join(ctx, shape, query)
	c.mu.Unlock()

	select {
	case <-b.done:
		return resultAt(b.results, b.err, index)
	case <-ctx.Done():
		c.leave(b)
		var none Result
		return none, ctx.Err()
	}
}

// join adds query to the shape's last open batch, or to a new one, and
// says where its result will be. Called with c.mu held.
func (c *coalescer[Shape, Query, Result]) join(ctx context.Context, shape Shape, query Query) (*batch[Shape, Query, Result], int) {
	queue := c.waiting[shape]
	var b *batch[Shape, Query, Result]
	if n := len(queue); n > 0 && len(queue[n-1].queries) < maxQueriesPerCall {
		b = queue[n-1]
	} else {
		b = &batch[Shape, Query, Result]{shape: shape, first: ctx, done: make(chan struct{})}
		c.waiting[shape] = append(queue, b)
	}
	b.queries = append(b.queries, query)
	b.members++
	if d, ok := ctx.Deadline(); !ok {
		b.unbounded = true
	} else if d.After(b.deadline) {
		b.deadline = d
	}
	return b, len(b.queries) - 1
}

// leave takes a member that stopped waiting out of its batch: a batch left
// by all is not sent, or its call is cancelled. Its query stays in the
// call (the other members' results are found by position).
func (c *coalescer[Shape, Query, Result]) leave(b *batch[Shape, Query, Result]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.members--; b.members > 0 {
		return
	}
	if b.started {
		b.cancel()
		return
	}
	queue := c.waiting[b.shape]
	for i, q := range queue {
		if q == b {
			c.waiting[b.shape] = append(queue[:i:i], queue[i+1:]...)
			break
		}
	}
	if len(c.waiting[b.shape]) == 0 {
		delete(c.waiting, b.shape)
	}
}

// finished ends a call of shape and starts the shape's next batch in its
// place.
func (c *coalescer[Shape, Query, Result]) finished(shape Shape) {
	c.mu.Lock()
	defer c.mu.Unlock()
	queue := c.waiting[shape]
	if len(queue) == 0 {
		if c.inFlight[shape]--; c.inFlight[shape] == 0 {
			delete(c.inFlight, shape)
		}
		return
	}
	b := queue[0]
	if len(queue) == 1 {
		delete(c.waiting, shape)
	} else {
		c.waiting[shape] = queue[1:]
	}
	var ctx context.Context
	if base := context.WithoutCancel(b.first); b.unbounded {
		ctx, b.cancel = context.WithCancel(base)
	} else {
		ctx, b.cancel = context.WithDeadline(base, b.deadline)
	}
	b.started = true
	go func() {
		defer b.cancel()
		b.results, b.err = c.run(ctx, shape, b.queries)
		close(b.done)
		c.finished(shape)
	}()
}

// resultAt is query i's result of a call.
func resultAt[Result any](results []Result, err error, i int) (Result, error) {
	var none Result
	switch {
	case err != nil:
		return none, err
	case i >= len(results):
		return none, fmt.Errorf("a read of %d results has none for query %d", len(results), i+1)
	}
	return results[i], nil
}
