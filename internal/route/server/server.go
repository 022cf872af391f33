package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// Options are what a route's API serves with; New reads them once.
type Options struct {
	Engine   *turn.Engine
	Searcher *retrieval.Searcher
	Log      turnlog.Log
	// Feedback keeps answered turns ratable and their users' verdicts
	// (POST /v1/turns/{id}/feedback, feedback.go); nil: the route takes
	// no feedback.
	Feedback turnlog.Feedback
	Auth     identity.Authenticator
	Limits   Limits
	// Ready checks what this replica needs to serve (the Milvus collection
	// alias served); a failure names its dependency with *NotReadyError,
	// and /readyz answers only the names.
	Ready func(ctx context.Context) error
	// ModelHealth checks the chat model's server for the ragroute_model_up
	// gauge, every ModelCheckEvery (default 15 s). It is not readiness: the
	// model is shared, so a blip would take every replica out at once.
	ModelHealth     func(ctx context.Context) error
	ModelCheckEvery time.Duration
	// UpstreamRetries reads each upstream's count of retried calls (429,
	// 503, refused) by name (chat, embedder, reranker), exported as
	// ragroute_upstream_retries_total.
	UpstreamRetries map[string]func() int64
	// RedisRejected reads the count of values read from Redis that did
	// not open (forged, or sealed under another key), exported as
	// ragroute_redis_rejected_values_total; nil: the route has no Redis.
	RedisRejected func() int64
	// ModelID is the model name /v1/models lists (the route's name).
	ModelID string
	// ConfigHash names the config this replica runs (the operator's
	// podconfig.EnvConfigHash), sent on every API answer
	// (withConfigHash); "": none sent.
	ConfigHash string
	// Page, when set, serves the route's web page at GET / (and its
	// assets); nil: no page.
	Page http.Handler
	// CORSAllowedOrigins are the browser origins answered with CORS
	// headers (cors.go); none: no CORS.
	CORSAllowedOrigins []string
	// MCP, when set, serves the route's tools to agents at /mcp (mcp.go);
	// nil: no /mcp.
	MCP *MCPOptions
	// Tracing, when set, traces each request and the turn it starts
	// (W3C trace context taken from the caller); nil: no tracing.
	Tracing trace.TracerProvider
	Logger  *slog.Logger
	// Now is the clock of the admission (what the per-user rate is
	// measured by) and of the readiness result's age; time.Now when nil.
	Now func() time.Time
}

// Server is the route's HTTP API, built by New.
type Server struct {
	opts      Options
	metrics   *metrics
	admission *admission
	// verdicts admits users' feedback: the same limits, its own budget.
	verdicts  *admission
	streams   *streams
	readiness *readyMemo
	// draining is set once the route is told to stop (Drain).
	draining atomic.Bool
	// turns is cancelled at the end of the drain so turns still running
	// end with an error event instead of hanging, and every stream still
	// open ends (openStream).
	turns   context.Context
	started time.Time
	// handler serves everything on one port; api and probes split it in
	// two (the API's paths; health, readiness and metrics).
	handler, api, probes http.Handler
}

// New builds the API of opts: its metrics registry, its admission and its
// routes, once. ctx bounds the turns it starts and the chat model's health
// watch, which starts here when opts.ModelHealth is set; cancel it on
// shutdown.
func New(ctx context.Context, opts Options) *Server {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{opts: opts, admission: newAdmission("turns", opts.Limits, now), verdicts: newAdmission("verdicts", opts.Limits, now), streams: newStreams(opts.Limits), turns: ctx, started: time.Now(),
		readiness: &readyMemo{check: opts.Ready, now: now, base: ctx}}
	var cache any
	if opts.Searcher != nil {
		cache = opts.Searcher.Cache
	}
	s.metrics = newMetrics(s.admission.running, opts.UpstreamRetries, cache, opts.Log)
	if opts.RedisRejected != nil {
		s.metrics.countRedisRejected(opts.RedisRejected)
	}
	s.api, s.probes = s.routes()
	s.handler = oneHandler(s.api, s.probes)
	if opts.ModelHealth != nil {
		go s.watchModel(ctx)
	}
	return s
}

// Handler is every path on one port, the API's, health, readiness and
// metrics, as New built them: every call returns the same handler, over
// the same metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// APIHandler is Handler without health, readiness and metrics, for the
// API's port when ProbeHandler has its own.
func (s *Server) APIHandler() http.Handler { return s.api }

// ProbeHandler serves GET /healthz, /readyz and /metrics only: on a port
// of their own, the probes and the scraper never reach the API's port
// (where identity headers are believed), nor the API theirs.
func (s *Server) ProbeHandler() http.Handler { return s.probes }

// probePaths are the paths ProbeHandler serves.
var probePaths = []string{"/healthz", "/readyz", "/metrics"}

// oneHandler serves the probe paths from probes and the rest from api.
func oneHandler(api, probes http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(probePaths, r.URL.Path) {
			probes.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// routes maps the API's paths to their handlers, each instrumented, then
// wraps them in tracing, CORS and the request id; and the probes' paths,
// untraced.
func (s *Server) routes() (api, probes http.Handler) {
	mux := http.NewServeMux()
	for pattern, handler := range map[string]http.Handler{
		"POST /v1/turns":            s.endpoint(s.submit),
		"GET /v1/turns/{id}/events": s.endpoint(s.events),
		"POST /v1/search":           s.endpoint(s.search),
		"POST /v1/chat/completions": s.endpoint(s.completions),
		"GET /v1/models":            s.endpoint(s.models),
		"GET /v1/models/{id}":       s.endpoint(s.models),
	} {
		_, path, _ := strings.Cut(pattern, " ")
		mux.Handle(pattern, s.metrics.instrument(path, handler))
	}
	mux.Handle("POST /v1/turns/{id}/feedback", s.metrics.instrument("/v1/turns/{id}/feedback", s.endpoint(s.feedback)))
	if s.opts.MCP != nil {
		for pattern, handler := range s.mcpHandlers() {
			path := pattern[strings.Index(pattern, "/"):]
			mux.Handle(pattern, s.metrics.instrument(path, handler))
		}
	}
	if s.opts.Page != nil {
		mux.Handle("GET /{$}", s.metrics.instrument("/", s.opts.Page))
		mux.Handle("GET /ui/", s.metrics.instrument("/ui/", s.opts.Page))
	}
	var handler http.Handler = mux
	if s.opts.Tracing != nil {
		handler = otelhttp.NewHandler(mux, "ragroute", otelhttp.WithTracerProvider(s.opts.Tracing),
			otelhttp.WithPropagators(propagation.TraceContext{}),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "HTTP " + r.Method }))
	}

	probeMux := http.NewServeMux()
	probeMux.Handle("GET /healthz", s.metrics.instrument("/healthz",
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })))
	probeMux.Handle("GET /readyz", s.metrics.instrument("/readyz", http.HandlerFunc(s.ready)))
	probeMux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}))
	return withRequestID(withConfigHash(s.opts.ConfigHash, withCORS(s.opts.CORSAllowedOrigins, handler))), withRequestID(probeMux)
}
