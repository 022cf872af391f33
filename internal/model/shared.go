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
	// asking is the question of a turn let in (the Starting lane's
	// Embed): it goes ahead of every check, and alongside one in a call,
	// so that a busy check never holds a search past its deadline.
	asking Lane = iota
	// Finishing is the work of turns that have started answering: the
	// grounding check's sentences and fragments. It goes first, so that an
	// answer already streaming gets its verdicts before new turns take the
	// embedder: under load new turns wait to start (their time to first
	// token grows) instead of answers ending unchecked.
	Finishing
	// Starting is what lets a turn start (Admitter): it waits behind the
	// checks, paced by what they cost; its embedder's texts, the
	// questions of turns let in, go first (asking).
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
// at most inFlight calls at once, each sending at most batch texts: the
// questions of turns let in first, then the Finishing lane's, or, while
// none waits or is in a call, one admission of the Starting lane
// (Admitter) as often as the checks the turns bring leave time for,
// oldest first within a lane.
// Concurrent callers' Finishing texts share calls: many callers with a
// few texts each (every turn's answer sentences) cost a few full calls,
// not one call each queued behind the others. A caller
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
	// wake wakes a drain pausing after an admission, or waiting to start
	// the next turn, when a question or a Finishing text arrives; perText
	// is what the latest call took a text.
	wake    chan struct{}
	perText atomic.Int64
	// Each start reserves the embedder's time for the check its turn will
	// bring: the next may go at nextStart, checkPerTurn texts' time later
	// (the Finishing texts queued between starts, smoothed), so turns are
	// let in as fast as their checks are served and their answers do not
	// come back together, a wave the answers behind it would wait out.
	// checkTexts counts the Finishing texts since the latest start; pacing
	// says a drain waits for nextStart.
	nextStart    time.Time
	checkTexts   int
	checkPerTurn float64
	pacing       bool
}

// checkSmoothing is how many starts the check texts a turn brings are
// averaged over: enough that a turn's own check, which comes a search and
// an answer after its start, is counted with the starts around it.
const checkSmoothing = 8

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
	return &Shared{inner: inner, batch: max(batch, 1), inFlight: max(inFlight, 1), wake: make(chan struct{}, 1)}
}

// Lane is the embedder of one lane's work. The Starting lane's is also
// an Admitter, and embeds the questions of the turns it let in ahead of
// every check.
func (s *Shared) Lane(l Lane) Embedder {
	if l == Starting {
		return startingLane{laneEmbedder{shared: s, lane: asking}}
	}
	return laneEmbedder{shared: s, lane: l}
}

// Admitter paces the turns a shared embedder serves.
type Admitter interface {
	// Admit waits until a new turn may start: behind the checks of the
	// answers already streaming, and no faster than their checks are
	// served. A search admits its turn before its question's embedding,
	// outside that step's deadline (a turn the exact cache serves costs
	// the embedder nothing to start, but its answer's check later).
	Admit(ctx context.Context) error
}

// startingLane is the Starting lane's Admitter, whose Embed embeds in the
// asking lane.
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
		s.checkTexts += len(texts)
	}
	if lane == Finishing || lane == asking {
		select {
		case s.wake <- struct{}{}:
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
		batch, lane, paced := s.take(time.Now())
		switch {
		case len(batch) == 0 && paced > 0 && !s.pacing:
			s.pacing = true
			s.forgetWake()
			s.mu.Unlock()
			s.pause(paced)
			s.mu.Lock()
			s.pacing = false
			s.mu.Unlock()
		case len(batch) == 0:
			s.running--
			s.mu.Unlock()
			return
		case batch[0].index == admission:
			close(batch[0].req.done)
			s.forgetWake()
			s.mu.Unlock()
			s.pause(time.Duration(s.perText.Load()))
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

// forgetWake drops the signal of texts that arrived before now: take
// has seen them. Under s.mu.
func (s *Shared) forgetWake() {
	select {
	case <-s.wake:
	default:
	}
}

// pause waits d, or until a question or a check text arrives. It
// follows an admission, which takes the drain for as long as the
// embedder takes a text, as the question it lets in will, and a start
// that must wait for nextStart.
func (s *Shared) pause(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-s.wake:
	}
}

// take removes the next batch from the queues and says its lane,
// skipping the texts of callers that gave up or failed: up to batch
// questions of turns let in, else up to batch Finishing texts or, while
// none waits or is in a call, one admission once nextStart has come
// (else how long until it does), or else up to batch leftover texts. New
// turns are let in one at a time: a crowd let in together would bring
// their answers' sentences back together. Under s.mu.
func (s *Shared) take(now time.Time) ([]piece, Lane, time.Duration) {
	s.demoteAbandoned()
	for lane, limit := range [lanes]int{asking: s.batch, Finishing: s.batch, Starting: 1, leftover: s.batch} {
		if Lane(lane) > Finishing && s.checking > 0 {
			return nil, Lane(lane), 0 // the drain in a check's call looks again after it
		}
		if Lane(lane) == Starting && now.Before(s.nextStart) {
			if s.dropGone(Starting); len(s.queues[Starting]) > 0 {
				return nil, Starting, s.nextStart.Sub(now)
			}
		}
		var batch []piece
		queue := s.queues[lane]
		n := 0
		for ; n < len(queue) && len(batch) < limit; n++ {
			if p := queue[n]; live(p) {
				batch = append(batch, p)
			}
		}
		s.queues[lane] = queue[n:]
		if len(s.queues[lane]) == 0 {
			s.queues[lane] = nil // let the drained array go
		}
		if len(batch) > 0 {
			if Lane(lane) == Starting {
				s.started(now)
			}
			return batch, Lane(lane), 0
		}
	}
	return nil, leftover, 0
}

// live says a piece's caller still waits for it.
func live(p piece) bool { return p.req.err == nil && p.req.ctx.Err() == nil }

// dropGone removes the pieces at the head of lane that no caller waits
// for any more. Under s.mu.
func (s *Shared) dropGone(lane Lane) {
	queue := s.queues[lane]
	n := 0
	for n < len(queue) && !live(queue[n]) {
		n++
	}
	if s.queues[lane] = queue[n:]; len(s.queues[lane]) == 0 {
		s.queues[lane] = nil
	}
}

// started reserves, at a turn's start, the embedder's time for the check
// the turn will bring. Under s.mu.
func (s *Shared) started(now time.Time) {
	s.checkPerTurn += (float64(s.checkTexts) - s.checkPerTurn) / checkSmoothing
	s.checkTexts = 0
	s.nextStart = now.Add(time.Duration(s.checkPerTurn * float64(s.perText.Load())))
}

// demoteAbandoned moves the Finishing texts no caller waits for any more
// behind the new turns, and drops the leftover texts past their own
// deadline: while new turns keep the embedder busy the leftover lane is
// never reached, and they would pile up. Under s.mu.
func (s *Shared) demoteAbandoned() {
	s.queues[Finishing] = slices.DeleteFunc(s.queues[Finishing], func(p piece) bool {
		if !abandoned(p.req.ctx) {
			return false
		}
		s.queues[leftover] = append(s.queues[leftover], p)
		return true
	})
	if s.queues[leftover] = slices.DeleteFunc(s.queues[leftover], func(p piece) bool { return !live(p) }); len(s.queues[leftover]) == 0 {
		s.queues[leftover] = nil
	}
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
