package controller

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// EvaluationMetrics are the RouteEvaluation gauges, labelled by namespace
// and evaluation only (never by question or user: bounded by the number
// of evaluations). A figure the last run did not measure is not exported.
type EvaluationMetrics struct {
	figure  *prometheus.GaugeVec
	passing *prometheus.GaugeVec
	lastRun *prometheus.GaugeVec
}

// NewEvaluationMetrics registers the gauges with reg.
func NewEvaluationMetrics(reg prometheus.Registerer) (*EvaluationMetrics, error) {
	labels := []string{"namespace", "evaluation"}
	m := &EvaluationMetrics{
		figure: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ragroute_evaluation_figure",
			Help: "The last finished run's figure (recallAt5, ndcgAt10, groundedRatio, …) of a RouteEvaluation."},
			append(labels, "figure")),
		passing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ragroute_evaluation_passing",
			Help: "1 when a RouteEvaluation's last run met its thresholds and did not regress, else 0."}, labels),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ragroute_evaluation_last_run_timestamp_seconds",
			Help: "When a RouteEvaluation's last run finished (Unix seconds)."}, labels),
	}
	for _, c := range []prometheus.Collector{m.figure, m.passing, m.lastRun} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register evaluation metrics: %w", err)
		}
	}
	return m, nil
}

// observe exports the last run of evaluation; nil m exports nothing.
func (m *EvaluationMetrics) observe(evaluation *v1alpha1.RouteEvaluation, last *v1alpha1.EvaluationRun, passing bool) {
	if m == nil || last == nil || last.Result == runRunning {
		return
	}
	ns, name := evaluation.Namespace, evaluation.Name
	m.passing.WithLabelValues(ns, name).Set(b2f(passing))
	if last.CompletionTime != nil {
		m.lastRun.WithLabelValues(ns, name).Set(float64(last.CompletionTime.Unix()))
	}
	for _, f := range qualityFigures {
		var value *float64
		if last.Figures != nil {
			value = f.value(last.Figures)
		}
		if value == nil {
			m.figure.DeleteLabelValues(ns, name, f.name)
			continue
		}
		m.figure.WithLabelValues(ns, name, f.name).Set(*value)
	}
}

// forget drops a deleted evaluation's series.
func (m *EvaluationMetrics) forget(namespace, name string) {
	if m == nil {
		return
	}
	labels := map[string]string{"namespace": namespace, "evaluation": name}
	m.figure.DeletePartialMatch(labels)
	m.passing.DeletePartialMatch(labels)
	m.lastRun.DeletePartialMatch(labels)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
