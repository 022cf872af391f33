package server

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// rssMB reads this process' resident set size.
func rssMB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkSoakTurns plays many whole turns (submit, search on Milvus Lite,
// answer, stream) through the server's turn path and the in-memory turn
// log, and reports RSS after the first quarter and at the end: per-turn
// state must be released, so the two stay close. The default -benchtime
// keeps it short; make bench is to pass -benchtime 50000x.
// go test ./internal/route/server -run '^$' -bench 'SoakTurns$' -benchtime 50000x
func BenchmarkSoakTurns(b *testing.B) {
	w := routetest.NewWorld(b)
	log := turnlog.NewMemory(time.Second, 10000, 0, time.Now)
	opts := Options{Engine: w.Engine, Searcher: w.Searcher, Log: log}
	// A start frees the expired turns of the in-memory log.
	soak(b, w, opts, func() { _ = log.Start(context.Background(), "purge", "nobody") })
}

// BenchmarkSoakTurnsRedis is BenchmarkSoakTurns with the turn log and the
// exact cache in Redis, as several replicas run (Redis expires the
// finished turns itself).
// go test ./internal/route/server -run '^$' -bench SoakTurnsRedis -benchtime 50000x
func BenchmarkSoakTurnsRedis(b *testing.B) {
	w := routetest.NewWorld(b)
	client := redis.NewClient(&redis.Options{Addr: routetest.Redis.Get(b).Addr})
	defer client.Close()
	prefix := "soak:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	route := w.Replica(b, routetest.WithParts(func(p *assembly.Parts) {
		p.Cache = retrieval.NewRedisCache(client, sealtest.New(b), prefix, time.Minute)
	}))
	opts := Options{Engine: route.Engine, Searcher: route.Searcher, Log: turnlog.NewRedis(client, sealtest.New(b), prefix, time.Second)}
	soak(b, w, opts, func() {})
}

// soak plays b.N turns on a server of opts one after another, reading
// each back from the log, and reports RSS after the first quarter and at
// the end; purge frees the log's expired turns before RSS is read.
func soak(b *testing.B, w *routetest.World, opts Options, purge func()) {
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", strings.Repeat("Lower waves go first. ", 20)+"[S1]")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.Auth, opts.Limits = identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, DefaultLimits()
	opts.Ready = func(context.Context) error { return nil }
	s := New(ctx, opts) // sets up the metrics and the turn context

	play := func(i int) {
		in := turn.Input{ID: fmt.Sprint(i), Messages: []model.Message{routetest.User(fmt.Sprintf("How are sync waves ordered, take %d?", i%50))}, Principals: []string{"group:staff"}}
		if err := opts.Log.Start(ctx, in.ID, "ann"); err != nil {
			b.Fatal(err)
		}
		s.play(s.turnOf(admitted{identity: identity.Identity{User: "ann"}, release: func() {}}, in, "turns"), trace.SpanFromContext(ctx))
		w.Models.Forget()
		events, done, err := opts.Log.Read(ctx, in.ID, 0, time.Second)
		if err != nil || !done || events[len(events)-1].Type != turn.EventTurnCompleted {
			b.Fatalf("turn %d: done %v err %v", i, done, err)
		}
	}
	quarter := max(b.N/4, 1)
	var early float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		play(i)
		if i == quarter-1 {
			early = settledRSS(b, purge)
		}
	}
	b.StopTimer()
	end := settledRSS(b, purge)
	b.ReportMetric(early, "rss_MB_after_first_quarter")
	b.ReportMetric(end, "rss_MB_at_end")
	growth := 100 * (end - early) / early
	b.ReportMetric(growth, "rss_growth_%")
	// Below some thousands of turns the first quarter is still warming
	// up (pools, caches, the allocator), so only long soaks are held to it.
	if b.N >= 10000 && (growth > 10 || growth < -10) {
		b.Errorf("RSS went from %.1f MB after the first quarter to %.1f MB at the end: per-turn state is kept", early, end)
	}
}

// settledRSS lets finished turns expire, collects, returns freed memory
// to the OS, then reads RSS: what stays is what is still held.
func settledRSS(b *testing.B, purge func()) float64 {
	time.Sleep(1100 * time.Millisecond) // the turn log's retention in these benchmarks
	purge()
	runtime.GC()
	debug.FreeOSMemory()
	return rssMB(b)
}
