package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// serveBare serves an API without a world (no Milvus, no model server),
// for the requests that never reach one, after set changes what a test
// needs.
func serveBare(t *testing.T, set func(*Options)) *httptest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts := Options{
		Log: turnlog.NewMemory(time.Minute, 100, 0, time.Now), Limits: DefaultLimits(),
		Auth:  identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"},
		Ready: func(context.Context) error { return nil },
	}
	set(&opts)
	srv := httptest.NewServer(New(ctx, opts).Handler())
	t.Cleanup(srv.Close)
	return srv
}

// stalledEmbedder answers nothing until its caller gives up; it says so
// in words that name an internal address, which no client may read.
type stalledEmbedder struct{}

func (stalledEmbedder) Embed(ctx context.Context, _ []string) ([][]float32, error) {
	<-ctx.Done()
	return nil, errors.New("embedder at http://10.0.0.7:8080: " + ctx.Err().Error())
}

// stalledSearcher is a searcher whose every search waits on the embedder,
// each step bounded by steps (0: the defaults).
func stalledSearcher(steps retrieval.Timeouts) *retrieval.Searcher {
	cfg := routetest.Config(8192)
	cfg.Cache.MaxEntries = 0
	cfg.Timeouts = podconfig.Timeouts{Embed: podconfig.Duration(steps.Embed), Search: podconfig.Duration(steps.Search),
		Rerank: podconfig.Duration(steps.Rerank)}
	return assembly.NewSearcher(cfg, assembly.Parts{Embedder: stalledEmbedder{}, Generation: assembly.FixedGeneration{Number: 1}})
}

// A search that runs past the turn's time limit (a search counts as a
// turn) answers as a timed-out turn does, 504 timeout with that code's
// fixed message; the upstream's error goes to the log only.
func TestSearchPastItsTimeLimitIsTimeout(t *testing.T) {
	var logs syncBuffer
	srv := serveBare(t, func(o *Options) {
		o.Searcher = stalledSearcher(retrieval.Timeouts{})
		o.Limits.TurnTimeout = 200 * time.Millisecond
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	start := time.Now()
	resp := do(t, "POST", srv.URL+"/v1/search", "ann", searchBody)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	leaks(t, "the search timeout", string(body))
	var got openAIError
	_ = json.Unmarshal(body, &got)
	if resp.StatusCode != http.StatusGatewayTimeout || got.Error.Code != turn.CodeTimeout ||
		got.Error.Message != turn.ErrorMessage(turn.CodeTimeout) || got.Error.Type != "server_error" {
		t.Errorf("search past its time limit: %d %s, want 504 %s", resp.StatusCode, body, turn.CodeTimeout)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the search answered after %s, its limit is 200ms", took) // hang detection only
	}
	// The embedder's own words never come back: its shared client, as a
	// pod's, stops waiting for the call at the turn's limit, so the log
	// names the step that ran out of time.
	if !strings.Contains(logs.String(), "embed the query") || !strings.Contains(logs.String(), `"code":"timeout"`) {
		t.Errorf("the log lacks the search's error:\n%s", logs.String())
	}
}

// A search step past its own deadline (spec.timeouts) is a knowledge
// failure, as in a turn: 502 knowledge_unavailable, not timeout.
func TestSearchStepPastItsDeadlineIsKnowledgeUnavailable(t *testing.T) {
	srv := serveBare(t, func(o *Options) { o.Searcher = stalledSearcher(retrieval.Timeouts{Embed: 100 * time.Millisecond}) })
	resp := do(t, "POST", srv.URL+"/v1/search", "ann", searchBody)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	leaks(t, "the search error", string(body))
	var got openAIError
	_ = json.Unmarshal(body, &got)
	if resp.StatusCode != http.StatusBadGateway || got.Error.Code != turn.CodeKnowledgeUnavailable ||
		got.Error.Message != turn.ErrorMessage(turn.CodeKnowledgeUnavailable) {
		t.Errorf("search with a step past its deadline: %d %s, want 502 %s", resp.StatusCode, body, turn.CodeKnowledgeUnavailable)
	}
}

// A failed search is classified as a failed turn is (turn.ErrorCode),
// under the facade's status for the code, with the code's fixed message.
func TestFailedSearchIsClassifiedAsATurn(t *testing.T) {
	expired, cancelExpired := context.WithTimeout(context.Background(), 0)
	defer cancelExpired()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	upstream := errors.New("dial tcp 10.0.0.7:19530: connection refused")
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		code   string
		status int
	}{
		{"past the time limit", expired, upstream, turn.CodeTimeout, http.StatusGatewayTimeout},
		{"cancelled", cancelled, upstream, turn.CodeCancelled, http.StatusServiceUnavailable},
		{"Milvus or the embedder down", context.Background(), upstream, turn.CodeKnowledgeUnavailable, http.StatusBadGateway},
		{"a step's deadline", context.Background(), errors.Join(context.DeadlineExceeded, upstream), turn.CodeKnowledgeUnavailable, http.StatusBadGateway},
	} {
		got := searchFailed(tc.ctx, tc.err)
		if got.Code != tc.code || got.Status != tc.status || got.Message != turn.ErrorMessage(tc.code) || !errors.Is(got, upstream) {
			t.Errorf("%s: %+v, want %d %s with the fixed message, the error kept for the log", tc.name, got, tc.status, tc.code)
		}
	}
}
