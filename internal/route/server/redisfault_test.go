package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/testenv"
)

// faultLimit is how soon a fault must show as a clear error: a hang
// detector, not a benchmark.
const faultLimit = 10 * time.Second

// TestRedisKilledIsTurnLogUnavailableAndRecovers: a route keeping its
// turns and cache in Redis tells a streaming client and a new turn that
// the turn log is unavailable (no internal address), still answers
// searches (the cache misses), and serves turns again once Redis is back.
func TestRedisKilledIsTurnLogUnavailableAndRecovers(t *testing.T) {
	ctx := context.Background()
	rdb, err := testenv.StartRedis(ctx, t.TempDir()) // this test's own: it kills it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Stop() })
	client := redis.NewClient(&redis.Options{Addr: rdb.Addr, DialTimeout: time.Second, ReadTimeout: time.Second})
	t.Cleanup(func() { _ = client.Close() })

	sealer := sealtest.New(t)
	w := routetest.NewWorld(t, routetest.WithParts(func(p *assembly.Parts) {
		p.Cache = retrieval.NewRedisCache(client, sealer, "fault:", time.Minute)
	}))
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", strings.Repeat("Lower waves go first and higher ones later. ", 40)+"[S1]")
	w.Models.ChunkDelay = 10 * time.Millisecond
	srv := serveWith(t, w, func(o *Options) { o.Log = turnlog.NewRedis(client, sealer, "fault:", time.Minute) })

	turnID := submit(t, srv, "ann", "How are sync waves ordered?")
	resp := do(t, "GET", srv.URL+"/v1/turns/"+turnID+"/events", "ann", "")
	defer resp.Body.Close()
	if first := readSSE(t, resp.Body, 8); first[len(first)-1].typ != turn.EventDelta {
		t.Fatalf("not mid-answer: %+v", first)
	}

	rdb.Stop()

	start := time.Now()
	rest := readSSE(t, resp.Body, 10000)
	t.Logf("Redis down: the open stream ended after %s", time.Since(start))
	last := rest[len(rest)-1]
	if last.typ != turn.EventError || last.id != 0 || !strings.Contains(last.data, codeTurnLogUnavailable) {
		t.Errorf("the open stream ended with %+v, want an error event without id naming %s", last, codeTurnLogUnavailable)
	}
	leaks(t, "the stream's error event", last.data)
	if took := time.Since(start); took > faultLimit {
		t.Errorf("the open stream ended after %s", took)
	}

	start = time.Now()
	status, retryAfter, apiErr := post(t, srv, "/v1/turns", "ann", `{"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`)
	t.Logf("Redis down: a new turn got %d after %s", status, time.Since(start))
	if status != http.StatusServiceUnavailable || apiErr.Code != codeTurnLogUnavailable || retryAfter == "" {
		t.Errorf("a new turn: %d %+v, Retry-After %q", status, apiErr, retryAfter)
	}
	leaks(t, "the submit error", apiErr.Message)
	if took := time.Since(start); took > faultLimit {
		t.Errorf("the submit error came after %s", took)
	}
	if status, _ := searchStatus(t, srv.URL); status != http.StatusOK {
		t.Errorf("a search while Redis is down: %d, want 200 (the cache only misses)", status)
	}

	if err := rdb.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	// The client redials about once a second after failed dials, so the
	// first requests may still be refused.
	start = time.Now()
	for !turnCompletes(t, srv.URL) {
		if time.Since(start) > faultLimit {
			t.Fatalf("no turn completed %s after Redis came back", faultLimit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("Redis back: a turn completed after %s", time.Since(start))
	// The restarted Redis is empty: the old turn is gone, and says so.
	resp = do(t, "GET", srv.URL+"/v1/turns/"+turnID+"/events", "ann", "", "Last-Event-ID", "8")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("resuming the lost turn: %d, want 404", resp.StatusCode)
	}
}

// turnCompletes submits a turn as ann and says whether its stream ends
// with turn.completed; a refused submit or stream is false.
func turnCompletes(t *testing.T, base string) bool {
	t.Helper()
	resp := do(t, "POST", base+"/v1/turns", "ann", `{"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`)
	var sub struct {
		StreamURL string `json:"stream_url"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&sub)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return false
	}
	stream := do(t, "GET", base+sub.StreamURL, "ann", "")
	defer stream.Body.Close()
	events := readSSE(t, stream.Body, 10000)
	return len(events) > 0 && events[len(events)-1].typ == turn.EventTurnCompleted
}

// searchStatus posts a search as ann and returns its status and body.
func searchStatus(t *testing.T, base string) (int, string) {
	t.Helper()
	resp := do(t, "POST", base+"/v1/search", "ann", `{"query":"sync waves"}`)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestModelRefusingOnceIsRetriedAndCounted: a model server that answers
// 429 or 503 once does not fail the turn; the retries show in
// ragroute_upstream_retries_total.
func TestModelRefusingOnceIsRetriedAndCounted(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	srv := serveWith(t, w, func(o *Options) {
		o.UpstreamRetries = map[string]func() int64{"chat": w.Engine.Chat.(model.RetryCounter).Retries}
	})
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		w.Models.RefuseChat(1, status)
		turnID := submit(t, srv, "ann", "How are sync waves ordered?")
		resp := do(t, "GET", srv.URL+"/v1/turns/"+turnID+"/events", "ann", "")
		events := readSSE(t, resp.Body, 10000)
		resp.Body.Close()
		if last := events[len(events)-1]; last.typ != turn.EventTurnCompleted {
			var got turn.Failed
			_ = json.Unmarshal([]byte(last.data), &got)
			t.Errorf("after one %d the turn ended with %s %+v", status, last.typ, got)
		}
	}
	waitForMetric(t, srv.URL, `ragroute_upstream_retries_total{upstream="chat"} 2`)
}

// flakyLog fails one Append, as a Redis that drops a connection does.
type flakyLog struct {
	turnlog.Log
	mu      sync.Mutex
	appends int
	failOn  int
}

func (l *flakyLog) Append(ctx context.Context, id string, ev turn.Event) error {
	l.mu.Lock()
	l.appends++
	fail := l.appends == l.failOn
	l.mu.Unlock()
	if fail {
		return errors.New("dial tcp 10.0.0.7:6379: connection reset by peer")
	}
	return l.Log.Append(ctx, id, ev)
}

// A turn whose log fails to take an event is cancelled, and its stream
// still ends, with an error event, instead of waiting for an event that
// will never come.
func TestTurnWhoseLogFailsOnceEndsItsStream(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", strings.Repeat("Lower waves go first. ", 30)+"[S1]")
	w.Models.ChunkDelay = 5 * time.Millisecond
	srv := serveWith(t, w, func(o *Options) {
		o.Log = &flakyLog{Log: turnlog.NewMemory(time.Minute, 100, 0, time.Now), failOn: 3}
	})
	turnID := submit(t, srv, "ann", "How are sync waves ordered?")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/turns/"+turnID+"/events", nil)
	req.Header.Set("X-User", "ann")
	req.Header.Set("X-Groups", "staff")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := readSSE(t, resp.Body, 10000)
	if ctx.Err() != nil {
		t.Fatal("the stream did not end within 30 s")
	}
	if last := events[len(events)-1]; last.typ != turn.EventError || !strings.Contains(last.data, turn.CodeCancelled) {
		t.Errorf("the stream ended with %+v, want the cancelled turn's error event", last)
	}
}
