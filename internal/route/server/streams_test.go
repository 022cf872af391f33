package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/testenv"
)

// heldModel writes the first words of an answer, so that every response
// carrying the turn has begun, then holds the turn until gate closes or
// the turn ends.
type heldModel struct{ gate chan struct{} }

func (m heldModel) Stream(ctx context.Context, _ []model.Message, _ []model.Tool, _ model.Generation, onDelta func(string) error) (model.Reply, error) {
	const answer = "Lower waves go first. "
	_ = onDelta(answer)
	select {
	case <-ctx.Done():
		return model.Reply{}, ctx.Err()
	case <-m.gate:
		return model.Reply{Content: answer}, nil
	}
}

// serveHeld serves a route with /mcp whose turns hold until letGo (no
// Milvus: the model answers without searching), after set changes what
// a test needs. drain ends the context the route was built with, as the
// end of a pod's drain does (cmd/ragroute).
func serveHeld(t *testing.T, set func(*Options)) (srv *httptest.Server, drain, letGo func()) {
	t.Helper()
	gate := make(chan struct{})
	cfg := routetest.Config(8192)
	index := &swappableIndex{}
	index.gen.Store(&knowledge.Generation{Number: 1})
	parts := assembly.Parts{Index: index, Embedder: &testenv.HashEmbedder{Dim: 8}, Generation: assembly.FixedGeneration{Number: 1},
		Chat: heldModel{gate: gate}}
	searcher := assembly.NewSearcher(cfg, parts)
	runner, err := assembly.NewEngine(cfg, searcher, parts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{
		Engine: runner, Searcher: searcher, Log: turnlog.NewMemory(time.Minute, 100, 0, time.Now), Limits: DefaultLimits(),
		Auth:  identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"},
		Ready: func(context.Context) error { return nil }, MCP: &MCPOptions{},
	}
	set(&opts)
	srv = httptest.NewServer(New(ctx, opts).Handler())
	t.Cleanup(srv.Close)
	var once sync.Once
	letGo = func() { once.Do(func() { close(gate) }) }
	// Before the server closes: it waits for the responses still open.
	t.Cleanup(letGo)
	t.Cleanup(cancel)
	return srv, cancel, letGo
}

// streamKind is one kind of long-lived response, and how a client opens
// one as user.
type streamKind struct {
	name string
	open func(t *testing.T, srv *httptest.Server, user string) *http.Response
	// ends is true for a response that ends by itself, its turn held or
	// not: it holds no stream once answered.
	ends bool
	// last is in the response's last data line once it ended (drained,
	// or answered when it ends); "": anything.
	last string
}

// mcpHeaders are what a streamable HTTP client sends with a POST.
var mcpHeaders = []string{"Accept", "application/json, text/event-stream"}

// streamKinds are every long-lived response of the API's surfaces.
func streamKinds() []streamKind {
	return []streamKind{
		{name: "turn events", open: func(t *testing.T, srv *httptest.Server, user string) *http.Response {
			return do(t, "GET", srv.URL+"/v1/turns/"+submit(t, srv, user, "How are sync waves ordered?")+"/events", user, "")
		}},
		{name: "streamed completion", last: "data: [DONE]", open: func(t *testing.T, srv *httptest.Server, user string) *http.Response {
			return do(t, "POST", srv.URL+"/v1/chat/completions", user,
				`{"model":"docs","stream":true,"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`)
		}},
		// The progress token makes the answer's first words a notification:
		// the response has begun while the turn is held.
		{name: "MCP ask", last: `"isError":true`, open: func(t *testing.T, srv *httptest.Server, user string) *http.Response {
			return do(t, "POST", srv.URL+"/mcp", user, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask",`+
				`"arguments":{"question":"How are sync waves ordered?"},"_meta":{"progressToken":"p1"}}}`, mcpHeaders...)
		}},
		// The route's tools never change: a listen has nothing to wait for.
		{name: "MCP subscriptions/listen", ends: true, last: `"result"`, open: func(t *testing.T, srv *httptest.Server, user string) *http.Response {
			return do(t, "POST", srv.URL+"/mcp", user, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen",`+
				`"params":{"notifications":{"toolsListChanged":true}}}`, mcpHeaders...)
		}},
	}
}

// held opens a stream of kind as user and closes it when the test ends.
func held(t *testing.T, srv *httptest.Server, kind streamKind, user string) *http.Response {
	t.Helper()
	resp := kind.open(t, srv, user)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// lastData is the last data line of an SSE body read to its end; err is
// the read's, a timeout when the body never ends.
func lastData(body io.Reader) (last string, err error) {
	data, err := io.ReadAll(body)
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "data: ") {
			last = strings.TrimSpace(line)
		}
	}
	return last, err
}

// Every kind of long-lived response counts against the same per-user
// stream limit and is refused past it as an event stream is (429
// too_many_streams, Retry-After): ann's limit filled by event streams and
// one of the kind (one that stays open: it holds its stream), her next of
// the kind is refused; bob's is served, and a listen answered whole.
func TestEveryKindOfStreamCountsAgainstTheSameLimit(t *testing.T) {
	const perUser = 3
	events := streamKinds()[0]
	for _, kind := range streamKinds() {
		t.Run(kind.name, func(t *testing.T) {
			srv, _, _ := serveHeld(t, func(o *Options) {
				// The turn limits never the reason of a refusal.
				o.Limits.StreamsPerUser, o.Limits.ConcurrentTurnsPerUser, o.Limits.TurnsPerMinutePerUser = perUser, 64, 60000
			})
			fill := slices.Repeat([]streamKind{events}, perUser)
			if !kind.ends {
				fill[perUser-1] = kind
			}
			for _, filler := range fill {
				if resp := held(t, srv, filler, "ann"); resp.StatusCode != http.StatusOK {
					t.Fatalf("ann's %s within her limit: %d", filler.name, resp.StatusCode)
				}
			}
			resp := held(t, srv, kind, "ann")
			var refused openAIError
			_ = json.NewDecoder(resp.Body).Decode(&refused)
			if resp.StatusCode != http.StatusTooManyRequests || refused.Error.Code != "too_many_streams" || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("ann's %s past her %d streams: %d %+v Retry-After %q, want 429 too_many_streams", kind.name, perUser,
					resp.StatusCode, refused.Error, resp.Header.Get("Retry-After"))
			}
			bobs := held(t, srv, kind, "bob")
			if bobs.StatusCode != http.StatusOK {
				t.Fatalf("bob's %s beside ann's: %d", kind.name, bobs.StatusCode)
			}
			if kind.ends {
				if last, err := lastData(bobs.Body); err != nil || !strings.Contains(last, kind.last) {
					t.Errorf("bob's %s ended with %q (%v), want %q", kind.name, last, err, kind.last)
				}
			}
		})
	}
}

// The end of a drain (the route's context done) ends every kind of
// long-lived response, its turn still held: none outlives the drain or
// holds up the pod's shutdown. Each ends as its surface ends a failed
// turn: a streamed completion with [DONE], an ask with its tool error.
func TestDrainEndsEveryKindOfStream(t *testing.T) {
	srv, drain, _ := serveHeld(t, func(o *Options) { o.Limits.ConcurrentTurnsPerUser, o.Limits.TurnsPerMinutePerUser = 64, 60000 })
	kinds := streamKinds()
	open := make([]*http.Response, len(kinds))
	for i, kind := range kinds {
		if open[i] = held(t, srv, kind, "ann"); open[i].StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", kind.name, open[i].StatusCode)
		}
	}
	drain()
	// Read at once, each to its end: a stream that outlives the drain
	// fails at the test client's timeout.
	var wg sync.WaitGroup
	for i, kind := range kinds {
		wg.Go(func() {
			last, err := lastData(open[i].Body)
			if err != nil || !strings.Contains(last, kind.last) {
				t.Errorf("%s ended with %q (%v), want its end %q", kind.name, last, err, kind.last)
			}
		})
	}
	wg.Wait()
}
