package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// BenchmarkConcurrentStreams: whole turns over HTTP (submit, then read the
// SSE stream to its end) from 64 concurrent clients.
func BenchmarkConcurrentStreams(b *testing.B) {
	w := routetest.NewWorld(b)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &Server{Runner: w.Runner, Searcher: w.Searcher, Log: turnlog.NewMemory(time.Second, 100000, time.Now),
		Auth: identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, Limits: DefaultLimits(), Ready: func(context.Context) error { return nil }}
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
				if len(events) == 0 || events[len(events)-1].typ != route.EventTurnCompleted {
					panic(fmt.Sprintf("turn %s ended with %+v", turn, events))
				}
				w.Models.Forget()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
}
