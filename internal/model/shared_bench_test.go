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
// turns against a one-thread embedder costing what all-MiniLM-L6-v2 on
// llama.cpp costs a text on 2 busy cores (20 ms): each turn starts (an
// uncached one embeds its question, a cached one does not), searches
// (40 ms off the embedder, 10 ms from the cache), then through the
// Finishing lane (2 calls of 16 at most) embeds its answer's first
// sentence as it is written and the other two once the answer has ended,
// as the Gate does. "straight" starts turns as routes did before the
// lanes (the question sent beside the check's calls, a cached turn at
// once); "lanes" as routes do (the question in the Starting lane, a
// cached turn admitted there). The trail is the time from the answer's
// end to the last verdict; past checkWait the route would have cut the
// check (grounding_unchecked).
func BenchmarkCheckAt64Streams(b *testing.B) {
	const streams, turns, checkWait = 64, 3, 2 * time.Second
	for _, cached := range []bool{false, true} {
		for _, lanes := range []bool{false, true} {
			name := map[bool]string{false: "uncached", true: "cached"}[cached] + "/" + map[bool]string{false: "straight", true: "lanes"}[lanes]
			b.Run(name, func(b *testing.B) {
				inner := &oneThreadEmbedder{perCall: 2 * time.Millisecond, perText: 20 * time.Millisecond}
				shared := NewShared(inner, 2, 16)
				check := shared.Lane(Finishing)
				start := func(ctx context.Context) {
					switch {
					case cached && lanes:
						_ = shared.Lane(Starting).(Admitter).Admit(ctx)
					case cached:
					case lanes:
						_, _ = shared.Lane(Starting).Embed(ctx, []string{"the question"})
					default:
						_, _ = inner.Embed(ctx, []string{"the question"})
					}
				}
				_, _ = check.Embed(context.Background(), []string{"an earlier turn's sentence"}) // the client has seen a call
				search := map[bool]time.Duration{false: 40 * time.Millisecond, true: 10 * time.Millisecond}[cached]
				for range b.N {
					var mu sync.Mutex
					var trails []time.Duration
					var wg sync.WaitGroup
					began := time.Now()
					for range streams {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for range turns {
								ctx := context.Background()
								start(ctx)
								time.Sleep(search)
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
					elapsed := time.Since(began)
					slices.Sort(trails)
					cut := 0
					for _, t := range trails {
						if t > checkWait {
							cut++
						}
					}
					b.ReportMetric(float64(len(trails))/elapsed.Seconds(), "turns/s")
					b.ReportMetric(float64(trails[len(trails)/2].Milliseconds()), "trail-p50-ms")
					b.ReportMetric(float64(trails[len(trails)*95/100].Milliseconds()), "trail-p95-ms")
					b.ReportMetric(100*float64(cut)/float64(len(trails)), "cut-%")
				}
			})
		}
	}
}
