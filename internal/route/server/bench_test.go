package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// BenchmarkConcurrentStreams: whole turns over HTTP (submit, then read the
// SSE stream to its end) from 64 concurrent clients.
func BenchmarkConcurrentStreams(b *testing.B) {
	w := routetest.NewWorld(b)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := Options{Engine: w.Engine, Searcher: w.Searcher, Log: turnlog.NewMemory(time.Second, 100000, 0, time.Now),
		Auth: identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, Limits: benchLimits(), Ready: func(context.Context) error { return nil }}
	srv := httptest.NewServer(New(ctx, opts).Handler())
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
				turnID := submit(b, srv, "ann", "How are sync waves ordered "+strconv.Itoa(int(next.Load())%200)+"?")
				resp := do(b, "GET", srv.URL+"/v1/turns/"+turnID+"/events", "ann", "")
				events := readSSE(b, resp.Body, 100000)
				resp.Body.Close()
				if len(events) == 0 || events[len(events)-1].typ != turn.EventTurnCompleted {
					panic(fmt.Sprintf("turn %s ended with %+v", turnID, events))
				}
				w.Models.Forget()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
}

// BenchmarkConcurrentStreamsUncached: whole turns over HTTP from 64
// concurrent clients, every question distinct and searched word for word,
// so every turn embeds and searches Milvus Lite (a retrieval event with
// cache_hit fails the benchmark). Reports turns/s and the time from the
// submit to the first delta the client reads.
func BenchmarkConcurrentStreamsUncached(b *testing.B) {
	const clients = 64
	w := routetest.NewWorld(b)
	w.Models.Chat = routetest.SearchQuestionThenAnswer("Lower waves go first [S1].")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := Options{Engine: w.Engine, Searcher: w.Searcher, Log: turnlog.NewMemory(time.Second, 100000, 0, time.Now),
		Auth: identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, Limits: benchLimits(), Ready: func(context.Context) error { return nil }}
	srv := httptest.NewServer(New(ctx, opts).Handler())
	defer srv.Close()
	// Keep the clients' connections: the default transport keeps 2 idle
	// per host, so 64 clients would open (and leave in TIME_WAIT) a new
	// connection for most requests.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	run := strconv.FormatInt(time.Now().UnixNano(), 36) // questions differ from other runs' too
	firstDeltas := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
				question := fmt.Sprintf("How are sync waves ordered in run %s, question %d?", run, i)
				ttfd, err := uncachedTurn(client, srv.URL, question)
				if err != nil {
					b.Errorf("question %d: %v", i, err)
					next.Store(int64(b.N)) // the other clients stop too
					return
				}
				firstDeltas[i] = ttfd
				w.Models.Forget()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if b.Failed() {
		return
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
	sort.Slice(firstDeltas, func(i, j int) bool { return firstDeltas[i] < firstDeltas[j] })
	quantile := func(p float64) float64 { return float64(firstDeltas[int(p*float64(b.N-1))].Microseconds()) / 1000 }
	b.ReportMetric(quantile(0.5), "ttfd_p50_ms")
	b.ReportMetric(quantile(0.99), "ttfd_p99_ms")
}

// uncachedTurn submits question, reads the turn's SSE stream to its end
// and returns the time to the first delta. It fails a turn whose search
// was a cache hit or found nothing, or that did not complete. It returns
// errors rather than failing: it runs on the clients' goroutines.
func uncachedTurn(client *http.Client, base, question string) (time.Duration, error) {
	start := time.Now()
	body, _ := json.Marshal(turnRequest{Messages: []model.Message{{Role: model.RoleUser, Content: question}}})
	resp, err := send(client, "POST", base+"/v1/turns", string(body))
	if err != nil {
		return 0, err
	}
	var submitted struct {
		TurnID string `json:"turn_id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&submitted)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusAccepted {
		return 0, fmt.Errorf("submit: %d %v", resp.StatusCode, err)
	}
	if resp, err = send(client, "GET", base+"/v1/turns/"+submitted.TurnID+"/events", ""); err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var firstDelta time.Duration
	var typ, last string
	retrievals := 0
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = line[len("event: "):]
			if typ == turn.EventDelta && firstDelta == 0 {
				firstDelta = time.Since(start)
			}
		case strings.HasPrefix(line, "data: ") && typ == turn.EventRetrieval:
			var r turn.RetrievalReport
			if err := json.Unmarshal([]byte(line[len("data: "):]), &r); err != nil {
				return 0, err
			}
			if r.CacheHit || len(r.Sources) == 0 {
				return 0, fmt.Errorf("retrieval for %q: cache hit %v, %d sources", r.Query, r.CacheHit, len(r.Sources))
			}
			retrievals++
		case line == "" && typ != "":
			last, typ = typ, ""
		}
	}
	if last != turn.EventTurnCompleted || retrievals == 0 || firstDelta == 0 {
		return 0, fmt.Errorf("turn %s ended with %q after %d retrievals (scan: %v)", submitted.TurnID, last, retrievals, scanner.Err())
	}
	return firstDelta, nil
}

// send is do without the testing.TB: it runs on the clients' goroutines.
func send(client *http.Client, method, url, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User", "ann")
	req.Header.Set("X-Groups", "staff")
	resp, err := client.Do(req)
	if err == nil && resp.StatusCode >= 300 {
		resp.Body.Close()
		return nil, errors.New(method + " " + url + ": " + resp.Status)
	}
	return resp, err
}

// benchLimits are DefaultLimits without the turn limits: a benchmark's
// clients are one user starting turns as fast as the route answers.
func benchLimits() Limits {
	l := DefaultLimits()
	l.ConcurrentTurnsPerUser, l.TurnsPerMinutePerUser, l.MaxInFlightTurns = 1<<20, 1<<30, 1<<20
	l.StreamsPerUser, l.MaxStreams = 1<<20, 1<<20 // one user holds the 64 clients' streams
	return l
}
