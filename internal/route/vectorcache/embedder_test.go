package vectorcache

import (
	"context"
	"errors"
	"testing"
	"time"
)

// gatedEmbedder answers once released, or fails when its call's context
// ends first.
type gatedEmbedder struct{ release chan struct{} }

func (e *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-e.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1}
	}
	return out, nil
}

// A check the turn stops waiting for (its deadline, the turn's end) still
// keeps the fragments' vectors when FillFor lets the call go on: the next
// turn over the same fragments sends the embedder nothing. Without it the
// call ends with the caller and nothing is kept.
func TestFillOutlivesTheCallerThatStoppedWaiting(t *testing.T) {
	for _, c := range []struct {
		name     string
		fillFor  time.Duration
		wantKept bool
	}{
		{"FillFor", time.Minute, true},
		{"no FillFor", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := &gatedEmbedder{release: make(chan struct{})}
			cache := NewMemory(1 << 20)
			e := Embedder{Embedder: inner, Cache: cache, Identity: "a", FillFor: c.fillFor}
			texts := []string{"Lower waves go first.", "A wave waits for the previous one."}

			ctx, cancel := context.WithCancel(context.Background())
			errs := make(chan error, 1)
			go func() { _, err := e.Embed(ctx, texts); errs <- err }()
			cancel()
			if err := <-errs; !errors.Is(err, context.Canceled) {
				t.Fatalf("the caller that stopped waiting got %v, want context.Canceled", err)
			}
			close(inner.release)

			// The detached call, if any, lands in the cache.
			keys := []string{vectorKey("a", texts[0]), vectorKey("a", texts[1])}
			kept := func() bool {
				v := cache.Get(context.Background(), keys)
				return v[0] != nil && v[1] != nil
			}
			deadline := time.After(10 * time.Second)
			for c.wantKept && !kept() {
				select {
				case <-deadline:
					t.Fatal("the call went on but its vectors were never kept")
				case <-time.After(5 * time.Millisecond):
				}
			}
			if got := kept(); got != c.wantKept {
				t.Errorf("vectors kept: %v, want %v", got, c.wantKept)
			}
		})
	}
}
