package api

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

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/routetest"
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
// answer, stream) through the HTTP API and reports RSS after the first
// and the last quarter: per-turn state must be released, so the two stay
// close. go test ./internal/route/api -run '^$' -bench SoakTurns -benchtime 2000x
func BenchmarkSoakTurns(b *testing.B) {
	w := routetest.NewWorld(b)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", strings.Repeat("Lower waves go first. ", 20)+"[S1]")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &Server{Runner: w.Runner, Searcher: w.Searcher, Log: turnlog.NewMemory(time.Second, 10000, time.Now),
		Auth: identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, Limits: DefaultLimits(),
		Ready: func(context.Context) error { return nil }}
	s.Handler(ctx) // sets up the metrics and the turn context

	play := func(i int) {
		in := route.TurnInput{ID: fmt.Sprint(i), Messages: []model.Message{routetest.User(fmt.Sprintf("How are sync waves ordered, take %d?", i%50))}, Principals: []string{"group:staff"}}
		if err := s.Log.Start(ctx, in.ID, "ann"); err != nil {
			b.Fatal(err)
		}
		s.play(in)
		w.Models.Forget()
		events, done, err := s.Log.Read(ctx, in.ID, 0, time.Second)
		if err != nil || !done || events[len(events)-1].Type != route.EventTurnCompleted {
			b.Fatalf("turn %d: done %v err %v", i, done, err)
		}
	}
	quarter := max(b.N/4, 1)
	var early float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		play(i)
		if i == quarter-1 {
			early = settledRSS(b, s.Log)
		}
	}
	b.StopTimer()
	b.ReportMetric(early, "rss_MB_after_first_quarter")
	b.ReportMetric(settledRSS(b, s.Log), "rss_MB_at_end")
}

// settledRSS lets finished turns expire, collects, returns freed memory
// to the OS, then reads RSS: what stays is what is still held.
func settledRSS(b *testing.B, log turnlog.Log) float64 {
	time.Sleep(1100 * time.Millisecond)                    // the turn log's retention in this benchmark
	_ = log.Start(context.Background(), "purge", "nobody") // a start frees expired turns
	runtime.GC()
	debug.FreeOSMemory()
	return rssMB(b)
}
