package model

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowEmbedder counts its calls in flight and the largest batch.
type slowEmbedder struct {
	mu                  sync.Mutex
	inFlight, maxFlight int
	maxBatch            int
}

func (s *slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	s.mu.Lock()
	s.inFlight++
	s.maxFlight, s.maxBatch = max(s.maxFlight, s.inFlight), max(s.maxBatch, len(texts))
	s.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t))}
	}
	return out, nil
}

// Background embedding sends small batches, a few at once, and keeps each
// caller's vectors in order.
func TestThrottledBoundsBatchesAndCallsInFlight(t *testing.T) {
	inner := &slowEmbedder{}
	e := Throttled(inner, 2, 3)
	var wg sync.WaitGroup
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts := make([]string, 7+c)
			for i := range texts {
				texts[i] = string(make([]byte, i))
			}
			vectors, err := e.Embed(context.Background(), texts)
			if err != nil || len(vectors) != len(texts) {
				t.Errorf("Embed: %d vectors, %v", len(vectors), err)
				return
			}
			for i, v := range vectors {
				if v[0] != float32(i) {
					t.Errorf("vector %d is text %v's", i, v[0])
				}
			}
		}()
	}
	wg.Wait()
	if inner.maxFlight > 2 || inner.maxBatch > 3 {
		t.Errorf("%d calls in flight, batches of up to %d: want at most 2 and 3", inner.maxFlight, inner.maxBatch)
	}
}

// A caller that gives up while waiting for a slot is told so at once.
func TestThrottledWaitsOnlyAsLongAsItsContext(t *testing.T) {
	block := make(chan struct{})
	e := Throttled(blockingEmbedder(block), 1, 8)
	go func() { _, _ = e.Embed(context.Background(), []string{"holds the slot"}) }()
	time.Sleep(10 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := e.Embed(ctx, []string{"waits"}); err == nil {
		t.Error("a call past its context embedded anyway")
	}
	close(block)
}

type blockingEmbedder chan struct{}

func (b blockingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	<-b
	return make([][]float32, len(texts)), nil
}

// heldEmbedder holds each call until the test releases it, and records
// the texts of every call.
type heldEmbedder struct {
	started chan []string
	release chan struct{}
}

func (h heldEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.started <- texts
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t))}
	}
	return out, nil
}

// queued is how many texts wait for a call.
func (t *throttled) queued() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.queue)
}

// busy says a call is in flight or texts wait.
func (t *throttled) busy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running > 0 || len(t.queue) > 0
}

// Many callers with a few texts each, waiting while the embedder is busy,
// share the next call instead of queueing one call each: the grounding
// check of 64 concurrent turns costs a few calls, not 64.
func TestThrottledCallersWaitingTogetherShareACall(t *testing.T) {
	inner := heldEmbedder{started: make(chan []string, 8), release: make(chan struct{})}
	e := Throttled(inner, 1, 16).(*throttled)
	results := make(chan error, 6)
	embed := func(texts []string) {
		vectors, err := e.Embed(context.Background(), texts)
		if err == nil {
			for i, v := range vectors {
				if v[0] != float32(len(texts[i])) {
					err = fmt.Errorf("vector %d of %q is another text's", i, texts)
				}
			}
		}
		results <- err
	}
	go embed([]string{"first"})
	if got := <-inner.started; len(got) != 1 {
		t.Fatalf("first call %q", got)
	}
	for c := range 5 {
		go embed([]string{strings.Repeat("a", c+1), strings.Repeat("b", c+10), strings.Repeat("c", c+20)})
	}
	for e.queued() < 15 {
		runtime.Gosched()
	}
	close(inner.release)
	if got := <-inner.started; len(got) != 15 {
		t.Errorf("the waiting callers' next call sent %d texts, want all 15 of the 5 callers", len(got))
	}
	for range 6 {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
	select {
	case extra := <-inner.started:
		t.Errorf("a third call %q", extra)
	default:
	}
}

// A shared call goes on while one of its callers still waits, and stops
// once all of them gave up.
func TestThrottledCallStopsWhenAllItsCallersGaveUp(t *testing.T) {
	inner := heldEmbedder{started: make(chan []string, 8), release: make(chan struct{})}
	e := Throttled(inner, 1, 16).(*throttled)
	hold := make(chan error, 1)
	go func() { _, err := e.Embed(context.Background(), []string{"holds the call"}); hold <- err }()
	<-inner.started
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	errA, errB := make(chan error, 1), make(chan error, 1)
	go func() { _, err := e.Embed(ctxA, []string{"a"}); errA <- err }()
	go func() { _, err := e.Embed(ctxB, []string{"b"}); errB <- err }()
	for e.queued() < 2 {
		runtime.Gosched()
	}
	inner.release <- struct{}{} // the first call returns
	if err := <-hold; err != nil {
		t.Fatal(err)
	}
	if got := <-inner.started; len(got) != 2 {
		t.Fatalf("shared call %q", got)
	}
	cancelA()
	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that gave up got %v", err)
	}
	inner.release <- struct{}{} // B still waits: the call was not stopped
	if err := <-errB; err != nil {
		t.Errorf("the caller that waited got %v", err)
	}

	ctxC, cancelC := context.WithCancel(context.Background())
	errC := make(chan error, 1)
	go func() { _, err := e.Embed(ctxC, []string{"c"}); errC <- err }()
	<-inner.started
	cancelC()
	if err := <-errC; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that gave up got %v", err)
	}
	for e.busy() { // the call ends without a release
		runtime.Gosched()
	}
	cancelB()
}

// A failed call fails its caller, and the next call goes on.
func TestThrottledFailedCallFailsItsCaller(t *testing.T) {
	e := Throttled(failOn("bad"), 1, 1)
	if _, err := e.Embed(context.Background(), []string{"ok", "bad", "ok"}); err == nil {
		t.Error("the caller whose text failed was not told")
	}
	if vectors, err := e.Embed(context.Background(), []string{"ok", "ok"}); err != nil || len(vectors) != 2 {
		t.Errorf("the next caller got %d vectors, %v", len(vectors), err)
	}
}

type failOn string

func (f failOn) Embed(_ context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if t == string(f) {
			return nil, errors.New("embedder refused " + t)
		}
	}
	return make([][]float32, len(texts)), nil
}
