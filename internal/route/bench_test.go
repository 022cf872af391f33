package route

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
)

// backendClock sums the time spent in backend calls (embedder, Milvus,
// model) during one turn.
type backendClock struct{ total atomic.Int64 }

func (c *backendClock) since(t time.Time) { c.total.Add(int64(time.Since(t))) }

type timedIndex struct {
	Index
	clock *backendClock
}

func (i timedIndex) HybridSearch(ctx context.Context, req knowledge.SearchRequest) ([]knowledge.Hit, error) {
	defer i.clock.since(time.Now())
	return i.Index.HybridSearch(ctx, req)
}

func (i timedIndex) Parts(ctx context.Context, id string, p []string) ([]knowledge.Row, error) {
	defer i.clock.since(time.Now())
	return i.Index.Parts(ctx, id, p)
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
	ChatModel
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
	w := newWorld(b)
	w.models.Chat = searchThenAnswer("sync waves", "Lower waves go first [S1].")
	clock := &backendClock{}
	runner := *w.runner
	searcher := *w.searcher
	searcher.Index = timedIndex{Index: w.searcher.Index, clock: clock}
	searcher.Embedder = timedEmbedder{Embedder: w.searcher.Embedder, clock: clock}
	searcher.Cache = NewMemoryCache(0, time.Minute, time.Now) // every turn searches
	runner.Searcher, runner.Chat = &searcher, timedChat{ChatModel: w.runner.Chat, clock: clock}
	var overheads []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clock.total.Store(0)
		start := time.Now()
		var firstDelta time.Duration
		runner.Run(context.Background(), TurnInput{ID: "b", Messages: []model.Message{user("How are sync waves ordered?")}, Principals: []string{"group:staff"}},
			func(ev Event) {
				if ev.Type == EventDelta && firstDelta == 0 {
					firstDelta = time.Since(start)
				}
			})
		overheads = append(overheads, firstDelta-time.Duration(clock.total.Load()))
		w.models.Forget()
	}
	b.StopTimer()
	b.ReportMetric(percentile(overheads, 0.5), "overhead_p50_µs")
	b.ReportMetric(percentile(overheads, 0.99), "overhead_p99_µs")
}

// BenchmarkConcurrentStreams: whole turns over HTTP (submit, then read the
// SSE stream to its end) from 64 concurrent clients.
func BenchmarkConcurrentStreams(b *testing.B) {
	w := newWorld(b)
	w.models.Chat = searchThenAnswer("sync waves", "Lower waves go first [S1].")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &Server{Runner: w.runner, Searcher: w.searcher, Log: NewMemoryTurnLog(time.Second, 100000, time.Now),
		Auth: ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, Limits: DefaultLimits(), Ready: func(context.Context) error { return nil }}
	srv := httptest.NewServer(s.Handler(ctx))
	defer srv.Close()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < 64; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				turn := submit(b, srv, "ann", "How are sync waves ordered "+strconv.Itoa(int(next.Load())%200)+"?")
				resp := do(b, "GET", srv.URL+"/v1/turns/"+turn+"/events", "ann", "")
				events := readSSE(b, resp.Body, 100000)
				resp.Body.Close()
				if len(events) == 0 || events[len(events)-1].typ != EventTurnCompleted {
					panic(fmt.Sprintf("turn %s ended with %+v", turn, events))
				}
				w.models.Forget()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
}

// BenchmarkCacheHit: a search answered from the exact cache.
func BenchmarkCacheHit(b *testing.B) {
	w := newWorld(b)
	principals := []string{"group:staff", "public", "user:ann"}
	if _, err := w.searcher.Search(context.Background(), "how are sync waves ordered", principals); err != nil {
		b.Fatal(err)
	}
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := w.searcher.Search(context.Background(), "How are sync waves ordered?", principals)
		latencies = append(latencies, time.Since(start))
		if err != nil || !r.CacheHit {
			b.Fatalf("not a cache hit: %v", err)
		}
	}
	b.StopTimer()
	b.ReportMetric(percentile(latencies, 0.5), "hit_p50_µs")
	b.ReportMetric(percentile(latencies, 0.99), "hit_p99_µs")
}
