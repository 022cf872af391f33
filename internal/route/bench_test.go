package route_test

import (
	"context"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
)

// backendClock sums the time spent in backend calls (embedder, Milvus,
// model) during one turn.
type backendClock struct{ total atomic.Int64 }

func (c *backendClock) since(t time.Time) { c.total.Add(int64(time.Since(t))) }

type timedIndex struct {
	retrieval.Index
	clock *backendClock
}

func (i timedIndex) HybridSearch(ctx context.Context, req knowledge.SearchRequest) ([]knowledge.Hit, error) {
	defer i.clock.since(time.Now())
	return i.Index.HybridSearch(ctx, req)
}

func (i timedIndex) Parts(ctx context.Context, ids []string, p []string) (map[string][]knowledge.Row, error) {
	defer i.clock.since(time.Now())
	return i.Index.Parts(ctx, ids, p)
}

type timedEmbedder struct {
	knowledge.Embedder
	clock *backendClock
}

func (e timedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	defer e.clock.since(time.Now())
	return e.Embedder.Embed(ctx, texts)
}

// timedChat counts a model call until its reply, or until its first
// delta when it streams one (what comes after is not before the first delta).
type timedChat struct {
	route.ChatModel
	clock *backendClock
}

func (c timedChat) Stream(ctx context.Context, m []model.Message, tools []model.Tool, onDelta func(string) error) (model.Reply, error) {
	start := time.Now()
	first := true
	reply, err := c.ChatModel.Stream(ctx, m, tools, func(d string) error {
		if first {
			first = false
			c.clock.since(start)
		}
		return onDelta(d)
	})
	if first {
		c.clock.since(start)
	}
	return reply, err
}

func percentile(samples []time.Duration, p float64) float64 {
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	return float64(samples[int(p*float64(len(samples)-1))].Nanoseconds()) / 1000
}

// BenchmarkRouteOverhead: time to the first delta minus the time spent in
// the embedder, Milvus and the (instant, scripted) model, per turn.
func BenchmarkRouteOverhead(b *testing.B) {
	w := routetest.NewWorld(b)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	clock := &backendClock{}
	runner := *w.Runner
	searcher := *w.Searcher
	searcher.Index = timedIndex{Index: w.Searcher.Index, clock: clock}
	searcher.Embedder = timedEmbedder{Embedder: w.Searcher.Embedder, clock: clock}
	searcher.Cache = retrieval.NewMemoryCache(0, time.Minute, time.Now) // every turn searches
	runner.Searcher, runner.Chat = &searcher, timedChat{ChatModel: w.Runner.Chat, clock: clock}
	var overheads []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clock.total.Store(0)
		start := time.Now()
		var firstDelta time.Duration
		runner.Run(context.Background(), route.TurnInput{ID: "b", Messages: []model.Message{routetest.User("How are sync waves ordered?")}, Principals: []string{"group:staff"}},
			func(ev route.Event) {
				if ev.Type == route.EventDelta && firstDelta == 0 {
					firstDelta = time.Since(start)
				}
			})
		overheads = append(overheads, firstDelta-time.Duration(clock.total.Load()))
		w.Models.Forget()
	}
	b.StopTimer()
	b.ReportMetric(percentile(overheads, 0.5), "overhead_p50_µs")
	b.ReportMetric(percentile(overheads, 0.99), "overhead_p99_µs")
}

// BenchmarkCacheHit: a search answered from the exact cache.
func BenchmarkCacheHit(b *testing.B) {
	w := routetest.NewWorld(b)
	principals := []string{"group:staff", "public", "user:ann"}
	if _, err := w.Searcher.Search(context.Background(), "how are sync waves ordered", principals); err != nil {
		b.Fatal(err)
	}
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := w.Searcher.Search(context.Background(), "How are sync waves ordered?", principals)
		latencies = append(latencies, time.Since(start))
		if err != nil || !r.CacheHit {
			b.Fatalf("not a cache hit: %v", err)
		}
	}
	b.StopTimer()
	b.ReportMetric(percentile(latencies, 0.5), "hit_p50_µs")
	b.ReportMetric(percentile(latencies, 0.99), "hit_p99_µs")
}
