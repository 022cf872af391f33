package controller

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// The gauges carry the last run's measured figures under the evaluation's
// namespace and name only, and go with a deleted evaluation.
func TestEvaluationMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewEvaluationMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := &v1alpha1.RouteEvaluation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "nightly"}}
	last := succeeded("r1", "q", 0.8, 0.7)
	last.CompletionTime = &metav1.Time{}
	m.observe(e, last, true)
	want := `
# HELP ragroute_evaluation_figure The last finished run's figure (recallAt5, ndcgAt10, groundedRatio, …) of a RouteEvaluation.
# TYPE ragroute_evaluation_figure gauge
ragroute_evaluation_figure{evaluation="nightly",figure="ndcgAt10",namespace="team-a"} 0.7
ragroute_evaluation_figure{evaluation="nightly",figure="recallAt5",namespace="team-a"} 0.8
# HELP ragroute_evaluation_passing 1 when a RouteEvaluation's last run met its thresholds and did not regress, else 0.
# TYPE ragroute_evaluation_passing gauge
ragroute_evaluation_passing{evaluation="nightly",namespace="team-a"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ragroute_evaluation_figure", "ragroute_evaluation_passing"); err != nil {
		t.Error(err)
	}
	m.forget("team-a", "nightly")
	if n := testutil.CollectAndCount(m.figure) + testutil.CollectAndCount(m.passing) + testutil.CollectAndCount(m.lastRun); n != 0 {
		t.Errorf("%d series left after forget", n)
	}
	var none *EvaluationMetrics
	none.observe(e, last, true) // no registry: no metrics, no panic
}
