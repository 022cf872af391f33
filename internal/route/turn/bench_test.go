package turn_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
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
	turn.ChatModel
	clock *backendClock
}

func (c timedChat) Stream(ctx context.Context, m []model.Message, tools []model.Tool, gen model.Generation, onDelta func(string) error) (model.Reply, error) {
	start := time.Now()
	first := true
	reply, err := c.ChatModel.Stream(ctx, m, tools, gen, func(d string) error {
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

// cpuTime is the CPU (user + system) this process has used so far. Milvus
// Lite and Redis are child processes: they are not counted.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// callRecorder keeps the embedder and chat calls of one turn so they can
// be replayed without the route: the scripted model server runs in this
// process, and the replay measures what it (and the HTTP between) costs.
type callRecorder struct {
	mu    sync.Mutex
	calls []func() error
}

func (r *callRecorder) add(call func() error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

type recordingEmbedder struct {
	knowledge.Embedder
	rec *callRecorder
}

func (e recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	texts = append([]string{}, texts...)
	e.rec.add(func() error { _, err := e.Embedder.Embed(context.Background(), texts); return err })
	return e.Embedder.Embed(ctx, texts)
}

type recordingChat struct {
	turn.ChatModel
	rec *callRecorder
}

func (c recordingChat) Stream(ctx context.Context, m []model.Message, tools []model.Tool, gen model.Generation, onDelta func(string) error) (model.Reply, error) {
	m, tools = append([]model.Message{}, m...), append([]model.Tool{}, tools...)
	c.rec.add(func() error {
		_, err := c.ChatModel.Stream(context.Background(), m, tools, gen, func(string) error { return nil })
		return err
	})
	return c.ChatModel.Stream(ctx, m, tools, gen, onDelta)
}

// modelCPUPerTurn records the model and embedder calls of one uncached
// turn, replays them n times and returns the CPU one replay takes: the
// scripted servers' handlers and the clients' side of those calls. The
// turn recorded is a second one: the grounding check's fragment vectors
// are kept from the first, as on a route that has served a while.
func modelCPUPerTurn(b *testing.B, w *routetest.World, runner turn.Engine, searcher retrieval.Searcher, in turn.Input, n int) time.Duration {
	rec := &callRecorder{}
	embedder := recordingEmbedder{Embedder: searcher.Embedder, rec: rec}
	searcher.Embedder = embedder
	runner.Searcher, runner.Chat = &searcher, recordingChat{ChatModel: w.Engine.Chat, rec: rec}
	runner.Answer.Check = cachedChecker(embedder)
	runner.Run(context.Background(), in, func(turn.Event) {})
	rec.calls = nil
	runner.Run(context.Background(), in, func(turn.Event) {})
	if len(rec.calls) != 4 {
		b.Fatalf("a turn made %d model and embedder calls, want 4 (decide, embed the query, answer, check the answer's sentence)", len(rec.calls))
	}
	start := cpuTime(b)
	for i := 0; i < n; i++ {
		for _, call := range rec.calls {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
		w.Models.Forget()
	}
	return (cpuTime(b) - start) / time.Duration(n)
}

// BenchmarkRouteOverhead: time to the first delta minus the time spent in
// the embedder, Milvus and the (instant, scripted) model, per turn; and
// the CPU this process spends per turn: cpu_ms_per_turn counts all of it
// (the route, its Milvus client, and the scripted model and embedder
// servers, which run in this process), cpu_ms_per_turn_excl_model the
// same minus a replay of the turn's model and embedder calls alone.
func BenchmarkRouteOverhead(b *testing.B) {
	w := routetest.NewWorld(b)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	clock := &backendClock{}
	runner := *w.Engine
	searcher := *w.Searcher
	searcher.Index = timedIndex{Index: w.Searcher.Index, clock: clock}
	searcher.Embedder = timedEmbedder{Embedder: w.Searcher.Embedder, clock: clock}
	searcher.Cache = retrieval.NewMemoryCache(0, time.Minute, time.Now) // every turn searches
	runner.Searcher, runner.Chat = &searcher, timedChat{ChatModel: w.Engine.Chat, clock: clock}
	// As cmd/ragroute wires it; the check runs beside the answer, not
	// before its first delta, so its embedder is not timed.
	runner.Answer.Check = cachedChecker(w.Searcher.Embedder)
	in := turn.Input{ID: "b", Messages: []model.Message{routetest.User("How are sync waves ordered?")}, Principals: []string{"group:staff"}}
	var overheads []time.Duration
	b.ResetTimer()
	cpuStart := cpuTime(b)
	for i := 0; i < b.N; i++ {
		clock.total.Store(0)
		start := time.Now()
		var firstDelta time.Duration
		runner.Run(context.Background(), in,
			func(ev turn.Event) {
				if ev.Type == turn.EventDelta && firstDelta == 0 {
					firstDelta = time.Since(start)
				}
			})
		overheads = append(overheads, firstDelta-time.Duration(clock.total.Load()))
		w.Models.Forget()
	}
	cpu := (cpuTime(b) - cpuStart) / time.Duration(b.N)
	b.StopTimer()
	b.ReportMetric(percentile(overheads, 0.5), "overhead_p50_µs")
	b.ReportMetric(percentile(overheads, 0.99), "overhead_p99_µs")
	b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu_ms_per_turn")
	modelCPU := modelCPUPerTurn(b, w, runner, searcher, in, b.N)
	b.ReportMetric(float64((cpu-modelCPU).Microseconds())/1000, "cpu_ms_per_turn_excl_model")
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

// BenchmarkAnswerabilityCheck is what the check's free rules cost a turn
// before its answer: the question's coverage by each of three packed
// fragments of the Argo CD docs (3,000 characters each) and the names
// none of them holds. docs/route.md: "It costs nothing".
func BenchmarkAnswerabilityCheck(b *testing.B) {
	var packed []retrieval.Fragment
	for _, page := range []string{"user-guide/sync-waves.md", "user-guide/auto_sync.md", "operator-manual/notifications/triggers.md"} {
		text, err := os.ReadFile(filepath.Join("..", "..", "..", "test", "eval", "corpus", "argocd", page))
		if err != nil {
			b.Fatal(err)
		}
		packed = append(packed, retrieval.Fragment{Text: string(text[:min(len(text), 3000)]), Title: page, HeadingPath: []string{page}})
	}
	question := "How do I stop the Pull Request generator from creating preview environments for draft pull requests on GitHub with Velero?"
	b.ReportAllocs()
	for b.Loop() {
		turn.QuestionCoverage(question, packed)
		var all strings.Builder
		for _, f := range packed {
			all.WriteString(strings.ToLower(f.Text + " " + f.Title))
		}
		retrieval.MissingNames(question, all.String())
	}
}
