package model

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// throttled embeds the texts of all its callers in shared batches of at
// most batch texts, at most inFlight calls at once.
type throttled struct {
	inner    Embedder
	batch    int
	inFlight int

	mu      sync.Mutex
	queue   []piece // texts waiting for a call, oldest first
	running int     // calls in flight (each a drain goroutine)
}

// request is one caller's texts and, as calls return, their vectors.
type request struct {
	ctx     context.Context
	texts   []string
	vectors [][]float32
	left    int   // texts not embedded yet
	err     error // the first failed call's
	done    chan struct{}
}

// piece is one text of a request.
type piece struct {
	req   *request
	index int
}

// Throttled returns an embedder for background work that shares an
// embedding server with a turn's foreground (the query's embedding): at
// most inFlight of its calls run at once, each sending at most batch
// texts, so a foreground request waits behind a few small batches at
// most, never behind one large one. Concurrent callers' texts share
// calls, oldest first: many callers with a few texts each (every turn's
// answer sentences) cost a few full calls, not one call each queued
// behind the others. A caller waits as long as its context lives; a call
// stops once every caller it embeds for has given up.
func Throttled(inner Embedder, inFlight, batch int) Embedder {
	return &throttled{inner: inner, batch: max(batch, 1), inFlight: max(inFlight, 1)}
}

func (t *throttled) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	req := &request{ctx: ctx, texts: texts, vectors: make([][]float32, len(texts)), left: len(texts), done: make(chan struct{})}
	t.mu.Lock()
	for i := range texts {
		t.queue = append(t.queue, piece{req: req, index: i})
	}
	if t.running < t.inFlight {
		t.running++
		go t.drain()
	}
	t.mu.Unlock()
	select {
	case <-req.done:
		if req.err != nil {
			return nil, req.err
		}
		return req.vectors, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to embed: %w", ctx.Err())
	}
}

// drain makes calls while texts wait, then ends: the calls in flight are
// the drains running.
func (t *throttled) drain() {
	for {
		t.mu.Lock()
		batch := t.take()
		if len(batch) == 0 {
			t.running--
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
		t.call(batch)
	}
}

// take removes the next batch from the queue, skipping the texts of
// callers that gave up or failed. Under t.mu.
func (t *throttled) take() []piece {
	var batch []piece
	n := 0
	for ; n < len(t.queue) && len(batch) < t.batch; n++ {
		p := t.queue[n]
		if p.req.err == nil && p.req.ctx.Err() == nil {
			batch = append(batch, p)
		}
	}
	t.queue = t.queue[n:]
	if len(t.queue) == 0 {
		t.queue = nil // let the drained array go
	}
	return batch
}

// call embeds one batch and hands each caller its vectors. The call lives
// while any of its callers waits.
func (t *throttled) call(batch []piece) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].req.ctx))
	defer cancel()
	var waiting atomic.Int32
	texts := make([]string, len(batch))
	for i, p := range batch {
		texts[i] = p.req.texts[p.index]
		if i == 0 || p.req != batch[i-1].req { // a request's pieces are adjacent
			waiting.Add(1)
			stop := context.AfterFunc(p.req.ctx, func() {
				if waiting.Add(-1) == 0 {
					cancel()
				}
			})
			defer stop()
		}
	}
	vectors, err := t.inner.Embed(ctx, texts)
	if err == nil && len(vectors) != len(texts) {
		err = fmt.Errorf("the embedder returned %d vectors for %d texts", len(vectors), len(texts))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, p := range batch {
		switch {
		case p.req.err != nil:
		case err != nil:
			p.req.err = err
			close(p.req.done)
		default:
			p.req.vectors[p.index] = vectors[i]
			if p.req.left--; p.req.left == 0 {
				close(p.req.done)
			}
		}
	}
}

// Retries is the inner embedder's count of retried calls, or 0 when it
// keeps none.
func (t *throttled) Retries() int64 { return retriesOf(t.inner) }
