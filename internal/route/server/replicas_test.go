package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// replica is one route replica: its own Redis client, route (assembled
// again over the world's store and model server, its exact cache in
// Redis) and HTTP server, sharing the turn log and cache through Redis.
type replica struct {
	srv    *httptest.Server
	client *redis.Client
	stop   context.CancelFunc
}

func newReplica(t *testing.T, w *routetest.World, addr, prefix string) *replica {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr})
	ctx, cancel := context.WithCancel(context.Background())
	sealer := sealtest.Shared(t, prefix)
	log := turnlog.NewRedis(client, sealer, prefix, time.Minute)
	log.Heartbeat = 100 * time.Millisecond
	route := w.Replica(t, routetest.WithParts(func(p *assembly.Parts) {
		p.Cache = retrieval.NewRedisCache(client, sealer, prefix, time.Minute)
	}))
	opts := Options{Engine: route.Engine, Searcher: route.Searcher, Log: log, Limits: DefaultLimits(),
		Auth: identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, Ready: func(context.Context) error { return nil }}
	opts.Limits.KeepAlive = 200 * time.Millisecond
	srv := httptest.NewServer(New(ctx, opts).Handler())
	r := &replica{srv: srv, client: client, stop: cancel}
	t.Cleanup(func() { cancel(); srv.Close(); _ = client.Close() })
	return r
}

func TestAnyReplicaStreamsAnyTurn(t *testing.T) {
	addr := routetest.Redis.Get(t).Addr
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	prefix := "t:" + strconv.FormatInt(time.Now().UnixNano(), 10) + ":"
	a, b := newReplica(t, w, addr, prefix), newReplica(t, w, addr, prefix)

	turnID := submit(t, a.srv, "ann", "How are sync waves ordered?")
	resp := do(t, "GET", b.srv.URL+"/v1/turns/"+turnID+"/events", "ann", "")
	events := readSSE(t, resp.Body, 1000)
	resp.Body.Close()
	if len(events) == 0 || events[len(events)-1].typ != turn.EventTurnCompleted {
		t.Fatalf("replica B streamed %+v", events)
	}
	for i, ev := range events {
		if ev.id != int64(i+1) {
			t.Fatalf("event %d has id %d", i, ev.id)
		}
	}
	// A reconnect to A resumes where B left off: nothing more, nothing twice.
	resp = do(t, "GET", a.srv.URL+"/v1/turns/"+turnID+"/events", "ann", "", "Last-Event-ID", strconv.Itoa(len(events)-2))
	rest := readSSE(t, resp.Body, 1000)
	resp.Body.Close()
	if len(rest) != 2 || rest[1].typ != turn.EventTurnCompleted {
		t.Errorf("resume on A: %+v", rest)
	}

	// The exact cache is shared: B answers A's search from it.
	req := do(t, "POST", b.srv.URL+"/v1/search", "ann", `{"query":"sync waves"}`)
	var out struct {
		CacheHit bool `json:"cache_hit"`
	}
	_ = json.NewDecoder(req.Body).Decode(&out)
	req.Body.Close()
	if !out.CacheHit {
		t.Error("replica B missed the cache entry replica A wrote")
	}
}

func TestTurnOfADeadReplicaEndsWithAnError(t *testing.T) {
	addr := routetest.Redis.Get(t).Addr
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", strings.Repeat("Lower waves go first and higher ones later. ", 40)+"[S1]")
	w.Models.ChunkDelay = 20 * time.Millisecond
	prefix := "t:" + strconv.FormatInt(time.Now().UnixNano(), 10) + ":"
	a, b := newReplica(t, w, addr, prefix), newReplica(t, w, addr, prefix)

	turnID := submit(t, a.srv, "ann", "How are sync waves ordered?")
	resp := do(t, "GET", b.srv.URL+"/v1/turns/"+turnID+"/events", "ann", "")
	defer resp.Body.Close()
	first := readSSE(t, resp.Body, 8) // mid-answer
	if first[len(first)-1].typ != turn.EventDelta {
		t.Fatalf("not mid-answer: %+v", first)
	}
	// Replica A dies: its Redis connection and heartbeat go, its turn stops.
	_ = a.client.Close()
	a.stop()

	done := make(chan []sseEvent, 1)
	go func() { done <- readSSE(t, resp.Body, 10000) }()
	select {
	case rest := <-done:
		all := append(first, rest...)
		last := all[len(all)-1]
		if last.typ != turn.EventError && last.typ != turn.EventTurnCompleted {
			t.Fatalf("stream ended with %+v", last)
		}
		if last.typ == turn.EventError && !strings.Contains(last.data, "turn_lost") {
			t.Errorf("error event %s", last.data)
		}
		for i := 1; i < len(all); i++ {
			if all[i].id <= all[i-1].id {
				t.Fatalf("ids not increasing at %d: %d after %d", i, all[i].id, all[i-1].id)
			}
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the stream hung after its replica died")
	}
}
