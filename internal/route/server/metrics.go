package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// metrics are the route's Prometheus metrics, in a registry of their own.
type metrics struct {
	registry *prometheus.Registry
	stage    *prometheus.HistogramVec
	turns    *prometheus.CounterVec
	cache    *prometheus.CounterVec
	tokens   *prometheus.CounterVec
	// modelUp has no labels; as a vector it is absent until the first
	// model check, so a scrape before it does not read as "down".
	modelUp *prometheus.GaugeVec
	// refused counts requests turned away by a turn limit.
	refused *prometheus.CounterVec
	// firstToken is the time from a turn's admission to its first answer
	// text.
	firstToken prometheus.Histogram
	// errors counts failed turns by code.
	errors *prometheus.CounterVec
	// feedback counts users' verdicts by route and rating.
	feedback *prometheus.CounterVec
	// requests, inFlight and durations instrument the HTTP handlers.
	requests  *prometheus.CounterVec
	inFlight  prometheus.Gauge
	durations *prometheus.HistogramVec
	// collectors are all of the above, as registered.
	collectors []prometheus.Collector
}

// sized is a store that knows how many entries it holds (the memory cache
// and turn log; Redis keeps its own count).
type sized interface{ Len() int }

// newMetrics registers the route's metrics; inFlight reports the turns
// running now, retries each upstream's retried calls, cache and log (when
// sized) their sizes.
func newMetrics(inFlight func() int, retries map[string]func() int64, cache, log any) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ragroute_stage_duration_seconds", Help: "Duration of each stage of a turn.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}, []string{"stage"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ragroute_turns_total", Help: "Turns by result (answered, not_found, error).",
		}, []string{"result"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ragroute_cache_lookups_total", Help: "Exact cache lookups by result (hit, miss).",
		}, []string{"result"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ragroute_model_tokens_total", Help: "Chat model tokens by kind (prompt, completion).",
		}, []string{"kind"}),
		modelUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ragroute_model_up", Help: "1 when the chat model's server answered its last health check, else 0.",
		}, nil),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ragroute_requests_refused_total",
			Help: "Requests refused by a turn limit (concurrent_turns_per_user, turns_per_minute_per_user, max_in_flight_turns).",
		}, []string{"limit"}),
	}
	m.firstToken = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ragroute_time_to_first_token_seconds", Help: "Time from a turn's admission to the first text of its answer.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
	})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragroute_turn_errors_total", Help: "Failed turns by error code (knowledge_unavailable, model_timeout, …).",
	}, []string{"code"})
	m.feedback = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragroute_feedback_total", Help: "Users' verdicts on answers by route and rating (up, down); the last verdict on a turn counts again.",
	}, []string{"route", "rating"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragroute_http_requests_total", Help: "HTTP requests by handler, method and status code.",
	}, []string{"handler", "method", "code"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ragroute_http_requests_in_flight", Help: "HTTP requests being served now, event streams included.",
	})
	m.durations = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ragroute_http_request_duration_seconds", Help: "HTTP request durations by handler (an event stream lasts its turn).",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 15),
	}, []string{"handler"})
	inFlightGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ragroute_turns_in_flight", Help: "Turns and searches running on this replica now.",
	}, func() float64 { return float64(inFlight()) })
	m.collectors = []prometheus.Collector{m.stage, m.turns, m.cache, m.tokens, m.modelUp, m.refused, inFlightGauge,
		m.firstToken, m.errors, m.feedback, m.requests, m.inFlight, m.durations,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
	for upstream, read := range retries {
		m.collectors = append(m.collectors, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ragroute_upstream_retries_total", ConstLabels: prometheus.Labels{"upstream": upstream},
			Help: "Calls to an upstream (chat, embedder, reranker) retried after a 429, a 503 or a refused connection.",
		}, func() float64 { return float64(read()) }))
	}
	for name, store := range map[string]any{"ragroute_cache_entries": cache, "ragroute_turn_log_turns": log} {
		if s, ok := store.(sized); ok {
			m.collectors = append(m.collectors, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: name, Help: "Entries in this replica's memory cache or turn log (absent with Redis).",
			}, func() float64 { return float64(s.Len()) }))
		}
	}
	m.registry.MustRegister(m.collectors...)
	return m
}

// countRedisRejected exports read, the values read from Redis that did not
// open: a sign that someone writes to the route's Redis (or that replicas
// disagree on the seal key).
func (m *metrics) countRedisRejected(read func() int64) {
	c := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "ragroute_redis_rejected_values_total",
		Help: "Values read from Redis that did not open under the route's seal key, used as absent.",
	}, func() float64 { return float64(read()) })
	m.collectors = append(m.collectors, c)
	m.registry.MustRegister(c)
}

// instrument counts and times the requests of one handler, named by its
// route pattern so that turn ids do not become label values.
func (m *metrics) instrument(name string, h http.Handler) http.Handler {
	labels := prometheus.Labels{"handler": name}
	h = promhttp.InstrumentHandlerDuration(m.durations.MustCurryWith(labels), h)
	h = promhttp.InstrumentHandlerCounter(m.requests.MustCurryWith(labels), h)
	return promhttp.InstrumentHandlerInFlight(m.inFlight, h)
}

// setModelUp records the last model health check.
func (m *metrics) setModelUp(up bool) {
	value := 0.0
	if up {
		value = 1
	}
	m.modelUp.WithLabelValues().Set(value)
}

// observe records a finished turn's last event.
func (m *metrics) observe(ev turn.Event) {
	switch data := ev.Data.(type) {
	case turn.Completed:
		result := "answered"
		if data.NotFound {
			result = "not_found"
		}
		m.turns.WithLabelValues(result).Inc()
		for stage, ms := range data.Timings {
			m.stage.WithLabelValues(stage).Observe(float64(ms) / 1000)
		}
		m.tokens.WithLabelValues("prompt").Add(float64(data.Usage.PromptTokens))
		m.tokens.WithLabelValues("completion").Add(float64(data.Usage.CompletionTokens))
	case turn.Failed:
		m.turns.WithLabelValues("error").Inc()
		m.errors.WithLabelValues(data.Code).Inc()
	case turn.RetrievalReport:
		if data.CacheHit {
			m.cache.WithLabelValues("hit").Inc()
		} else {
			m.cache.WithLabelValues("miss").Inc()
		}
	}
}
