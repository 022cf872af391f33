package model

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Lane is a kind of work on a Shared embedder; every call serves the
// lower lanes' waiting texts first.
type Lane int

const (
	// Finishing is the work of turns that have started answering: the
	// grounding check's sentences and fragments. It goes first, so that an
	// answer already streaming gets its verdicts before new turns take the
	// embedder: under load new turns wait to start (their time to first
	// token grows) instead of answers ending unchecked.
	Finishing Lane = iota
	// Starting is the work that starts a turn: its question's embedding.
	Starting
	// leftover is Finishing work no turn waits for any more (Outlive's,
	// once its caller stopped waiting): after everything else.
	leftover
	lanes
)

// waiterKey holds, in an Outlive context, the context of its caller.
type waiterKey struct{}

// Outlive is a context for work that goes on for up to d after its
// caller (ctx) stops waiting, so that what it costs is not lost (the
// vectors of a check that was cut are kept for the next turn): a Shared
// client serves it in its lane while the caller waits, and after every
// other lane once the caller stopped.
func Outlive(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithValue(context.WithoutCancel(ctx), waiterKey{}, ctx), d)
}

// abandoned says no caller waits any more for work under ctx.
func abandoned(ctx context.Context) bool {
	waiter, ok := ctx.Value(waiterKey{}).(context.Context)
	return ok && waiter.Err() != nil
}

// Shared is one embedding server's client for all of a replica's work:
// at most inFlight calls at once, each sending at most batch texts of the
// Finishing lane or, while none waits or is in a call, one of the
// Starting lane (a question, or an admission: Admitter), oldest first
// within a lane. Concurrent callers' Finishing texts share calls:
// many callers with a few texts each (every turn's answer sentences) cost
// a few full calls, not one call each queued behind the others. A caller
// waits as long as its context lives; a call stops once every caller it
// embeds for has given up.
type Shared struct {
	inner    Embedder
	batch    int
	inFlight int

	mu       sync.Mutex
	queues   [lanes][]piece // texts waiting for a call, by lane, oldest first
	running  int            // drains running (each makes a call at a time)
	checking int            // calls of Finishing texts in flight
	// finishing wakes a drain pausing after an admission when a
	// Finishing text arrives; perText is what the latest call took a text.
	finishing chan struct{}
	perText   atomic.Int64
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

// piece is one text of a request, or an admission (index admission).
type piece struct {
	req   *request
	index int
}

// admission is the index of an Admit's piece: it waits its turn in the
// Starting lane like a question, and sends nothing.
const admission = -1

// NewShared returns the shared client of inner.
func NewShared(inner Embedder, inFlight, batch int) *Shared {
	return &Shared{inner: inner, batch: max(batch, 1), inFlight: max(inFlight, 1), finishing: make(chan struct{}, 1)}
}

// Lane is the embedder of one lane's work; the Starting lane's is also
// an Admitter.
func (s *Shared) Lane(l Lane) Embedder {
	if l == Starting {
		return startingLane{laneEmbedder{shared: s, lane: l}}
	}
	return laneEmbedder{shared: s, lane: l}
}

// Admitter paces the turns that start without an embedding.
type Admitter interface {
	// Admit waits until a new turn may start, as its question's embedding
	// would have: a turn whose search the exact cache serves costs the
	// embedder nothing to start, but its answer's check later.
	Admit(ctx context.Context) error
}

// startingLane is the Starting lane's embedder and Admitter.
type startingLane struct{ laneEmbedder }

func (e startingLane) Admit(ctx context.Context) error {
	_, err := e.shared.wait(ctx, Starting, nil)
	return err
}

// laneEmbedder embeds through its Shared client in its lane.
type laneEmbedder struct {
	shared *Shared
	lane   Lane
}

func (e laneEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	return e.shared.wait(ctx, e.lane, texts)
}

// wait queues texts in lane, or an admission when there are none, and
// waits for their vectors.
func (s *Shared) wait(ctx context.Context, lane Lane, texts []string) ([][]float32, error) {
	req := &request{ctx: ctx, texts: texts, vectors: make([][]float32, len(texts)), left: len(texts), done: make(chan struct{})}
	s.mu.Lock()
	for i := range texts {
		s.queues[lane] = append(s.queues[lane], piece{req: req, index: i})
	}
	if len(texts) == 0 {
		s.queues[lane] = append(s.queues[lane], piece{req: req, index: admission})
	}
	if lane == Finishing {
		select {
		case s.finishing <- struct{}{}:
		default:
		}
	}
	if s.running < s.inFlight {
		s.running++
		go s.drain()
	}
	s.mu.Unlock()
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
func (s *Shared) drain() {
	for {
		s.mu.Lock()
		batch, lane := s.take()
		switch {
		case len(batch) == 0:
			s.running--
			s.mu.Unlock()
			return
		case batch[0].index == admission:
			close(batch[0].req.done)
			select { // no Finishing text waits: forget the older arrivals'
			case <-s.finishing:
			default:
			}
			s.mu.Unlock()
			s.pause()
		default:
			if lane == Finishing {
				s.checking++
			}
			s.mu.Unlock()
			s.call(batch)
			if lane == Finishing {
				s.mu.Lock()
				s.checking--
				s.mu.Unlock()
			}
		}
	}
}

// pause follows an admission: the turn let in brings its check later, so
// the drain lets in no other for as long as the embedder takes a text,
// unless a check text comes first. Without it every turn waiting would be
// let in at once, and their checks would come back together.
func (s *Shared) pause() {
	timer := time.NewTimer(time.Duration(s.perText.Load()))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-s.finishing:
	}
}

// take removes the next batch from the queues and says its lane,
// skipping the texts of callers that gave up or failed: up to batch
// Finishing texts or, while none waits or is in a call, one Starting text
// or admission, or else up to batch leftover texts. New turns are let in
// one at a time: a crowd let in together would bring their answers'
// sentences back together, a wave that the answers behind it would wait
// out. Under s.mu.
func (s *Shared) take() ([]piece, Lane) {
	s.demoteAbandoned()
	for lane, limit := range [lanes]int{Finishing: s.batch, Starting: 1, leftover: s.batch} {
		if Lane(lane) != Finishing && s.checking > 0 {
			return nil, Lane(lane) // the drain in a check's call looks again after it
		}
		var batch []piece
		queue := s.queues[lane]
		n := 0
		for ; n < len(queue) && len(batch) < limit; n++ {
			if p := queue[n]; p.req.err == nil && p.req.ctx.Err() == nil {
				batch = append(batch, p)
			}
		}
		s.queues[lane] = queue[n:]
		if len(s.queues[lane]) == 0 {
			s.queues[lane] = nil // let the drained array go
		}
		if len(batch) > 0 {
			return batch, Lane(lane)
		}
	}
	return nil, leftover
}

// demoteAbandoned moves the Finishing texts no caller waits for any more
// behind the new turns. Under s.mu.
func (s *Shared) demoteAbandoned() {
	s.queues[Finishing] = slices.DeleteFunc(s.queues[Finishing], func(p piece) bool {
		if !abandoned(p.req.ctx) {
			return false
		}
		s.queues[leftover] = append(s.queues[leftover], p)
		return true
	})
}

// call embeds one batch and hands each caller its vectors. The call lives
// while any of its callers waits.
func (s *Shared) call(batch []piece) {
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
	started := time.Now()
	vectors, err := s.inner.Embed(ctx, texts)
	s.perText.Store(int64(time.Since(started)) / int64(len(texts)))
	if err == nil && len(vectors) != len(texts) {
		err = fmt.Errorf("the embedder returned %d vectors for %d texts", len(vectors), len(texts))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
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
func (s *Shared) Retries() int64 { return retriesOf(s.inner) }
