package api

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ragroute/ragroute/internal/route"
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
}

// newMetrics registers the route's metrics; inFlight reports the turns
// running now, retries each upstream's retried calls.
func newMetrics(inFlight func() int, retries map[string]func() int64) *metrics {
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
	inFlightGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ragroute_turns_in_flight", Help: "Turns and searches running on this replica now.",
	}, func() float64 { return float64(inFlight()) })
	m.registry.MustRegister(m.stage, m.turns, m.cache, m.tokens, m.modelUp, m.refused, inFlightGauge)
	for upstream, read := range retries {
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ragroute_upstream_retries_total", ConstLabels: prometheus.Labels{"upstream": upstream},
			Help: "Calls to an upstream (chat, embedder, reranker) retried after a 429, a 503 or a refused connection.",
		}, func() float64 { return float64(read()) }))
	}
	return m
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
func (m *metrics) observe(ev route.Event) {
	switch data := ev.Data.(type) {
	case route.TurnCompleted:
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
	case route.TurnError:
		m.turns.WithLabelValues("error").Inc()
	case route.RetrievalReport:
		if data.CacheHit {
			m.cache.WithLabelValues("hit").Inc()
		} else {
			m.cache.WithLabelValues("miss").Inc()
		}
	}
}
