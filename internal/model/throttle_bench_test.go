package model

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// oneThreadEmbedder stands for a one-thread embedding server: calls
// compute one at a time, each costing perCall plus perText a text.
type oneThreadEmbedder struct {
	mu               sync.Mutex
	perCall, perText time.Duration
}

func (e *oneThreadEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	time.Sleep(e.perCall + time.Duration(len(texts))*e.perText)
	e.mu.Unlock()
	return make([][]float32, len(texts)), nil
}

// BenchmarkCheckAt64Streams plays the grounding check of 64 streams of
// turns against a one-thread embedder: each turn embeds its question
// straight (the foreground), then, through the check's client (2 calls of
// 16 at most), its answer's first sentence as it is written and the other
// two once the answer has ended, as the Gate does. The trail is the time
// from the answer's end to the last verdict; past checkWait the route
// would have cut the check (grounding_unchecked).
func BenchmarkCheckAt64Streams(b *testing.B) {
	const streams, turns, checkWait = 64, 8, 2 * time.Second
	inner := &oneThreadEmbedder{perCall: time.Millisecond, perText: time.Millisecond}
	check := Throttled(inner, 2, 16)
	for range b.N {
		var mu sync.Mutex
		var trails []time.Duration
		var wg sync.WaitGroup
		for range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range turns {
					ctx := context.Background()
					_, _ = inner.Embed(ctx, []string{"the question"})
					first := make(chan struct{})
					go func() { _, _ = check.Embed(ctx, []string{"sentence one"}); close(first) }()
					ended := time.Now() // the scripted model writes at once
					<-first
					_, _ = check.Embed(ctx, []string{"sentence two", "sentence three"})
					mu.Lock()
					trails = append(trails, time.Since(ended))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		slices.Sort(trails)
		cut := 0
		for _, t := range trails {
			if t > checkWait {
				cut++
			}
		}
		b.ReportMetric(float64(trails[len(trails)/2].Milliseconds()), "trail-p50-ms")
		b.ReportMetric(float64(trails[len(trails)*95/100].Milliseconds()), "trail-p95-ms")
		b.ReportMetric(100*float64(cut)/float64(len(trails)), "cut-%")
	}
}
