package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// The adapter writes a handler's *apiError in OpenAI's shape, byte for
// byte as the API always has, with its headers; any other error is a 500
// that names nothing of it, and goes to the log.
func TestAdapterWritesOpenAIShape(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	for _, tc := range []struct {
		name   string
		err    error
		status int
		body   string
		header map[string]string
	}{
		{"refusal naming a field", badRequest("n", "n=2: a route returns exactly one choice"), 400,
			`{"error":{"code":"bad_request","message":"n: n=2: a route returns exactly one choice","param":"n","type":"invalid_request_error"}}` + "\n", nil},
		{"rate limit", &apiError{Status: 429, Code: "rate_limited", Message: "slow down", RetryAfter: 1500 * time.Millisecond}, 429,
			`{"error":{"code":"rate_limited","message":"slow down","param":null,"type":"rate_limit_error"}}` + "\n", map[string]string{"Retry-After": "2"}},
		{"failed turn", failed("model_error", "The chat model refused the request.").withRetryAdvice(), 502,
			`{"error":{"code":"model_error","message":"The chat model refused the request.","param":null,"type":"server_error"}}` + "\n",
			map[string]string{"X-Should-Retry": "false"}},
		{"wrapped", errors.Join(errors.New("context"), &apiError{Status: 404, Code: "turn_not_found", Message: "no turn x"}), 404,
			`{"error":{"code":"turn_not_found","message":"no turn x","param":null,"type":"not_found_error"}}` + "\n", nil},
		{"not meant for the client", errors.New("dial tcp 10.0.0.7:6379: connection refused"), 500,
			`{"error":{"code":"internal","message":"the request failed","param":null,"type":"server_error"}}` + "\n", nil},
	} {
		rec := httptest.NewRecorder()
		apiHandler{serve: func(http.ResponseWriter, *http.Request) error { return tc.err }, logger: logger}.
			ServeHTTP(rec, httptest.NewRequest("GET", "/v1/x", nil))
		if rec.Code != tc.status || rec.Body.String() != tc.body || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s", tc.name, rec.Code, rec.Body.String())
		}
		for name, want := range tc.header {
			if got := rec.Header().Get(name); got != want {
				t.Errorf("%s: %s %q, want %q", tc.name, name, got, want)
			}
		}
	}
	if !strings.Contains(logs.String(), "10.0.0.7") {
		t.Errorf("the hidden error was not logged:\n%s", logs.String())
	}
}

// New builds the handler, its metrics registry and the model watch once:
// Handler returns that handler however often it is called, so its
// requests show in one /metrics, and the model is watched once.
func TestHandlerIsBuiltOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var checks atomic.Int32
	s := New(ctx, Options{
		Log: turnlog.NewMemory(time.Minute, 10, 0, time.Now), Limits: DefaultLimits(),
		Auth:            identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"},
		Ready:           func(context.Context) error { return nil },
		ModelHealth:     func(context.Context) error { checks.Add(1); return nil },
		ModelCheckEvery: time.Hour,
	})
	first, second := s.Handler(), s.Handler()
	first.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	rec := httptest.NewRecorder()
	second.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	metrics, _ := io.ReadAll(rec.Body)
	if !strings.Contains(string(metrics), `ragroute_http_requests_total{code="200",handler="/healthz",method="get"} 1`) {
		t.Errorf("a request through the first handler is not in the second's /metrics:\n%s", metrics)
	}
	deadline := time.Now().Add(2 * time.Second)
	for checks.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // a second watch would have checked by now
	if n := checks.Load(); n != 1 {
		t.Errorf("the model was checked %d times at start, want once", n)
	}
	if other := New(ctx, Options{Log: turnlog.NewMemory(time.Minute, 10, 0, time.Now)}); other.Handler() == nil {
		t.Error("a second server in the process has no handler")
	}
}
