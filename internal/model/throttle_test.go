package model

import (
	"context"
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
