package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

func succeeded(job, questions string, recall5, ndcg float64) *v1alpha1.EvaluationRun {
	return &v1alpha1.EvaluationRun{Job: job, Result: runSucceeded, QuestionsHash: questions,
		Figures: &v1alpha1.EvaluationFigures{Questions: 10, Answerable: 8, RecallAt5: ptr.To(recall5), NDCGAt10: ptr.To(ndcg)}}
}

func TestPassingCondition(t *testing.T) {
	spec := &v1alpha1.RouteEvaluationSpec{Thresholds: &v1alpha1.EvaluationThresholds{MinRecallAt5: ptr.To(0.8)}}
	cases := []struct {
		name           string
		spec           *v1alpha1.RouteEvaluationSpec
		last, previous *v1alpha1.EvaluationRun
		status         metav1.ConditionStatus
		reason         string
		message        string
	}{
		{"no run yet", spec, nil, nil, metav1.ConditionUnknown, v1alpha1.ReasonEvaluationPending, "no run"},
		{"pass", spec, succeeded("r2", "q1", 0.9, 0.8), succeeded("r1", "q1", 0.9, 0.8), metav1.ConditionTrue, v1alpha1.ReasonThresholdsMet, ""},
		{"first run passes", spec, succeeded("r1", "q1", 0.9, 0.8), nil, metav1.ConditionTrue, v1alpha1.ReasonThresholdsMet, ""},
		{"below threshold", spec, succeeded("r2", "q1", 0.7, 0.8), nil, metav1.ConditionFalse, v1alpha1.ReasonBelowThreshold,
			"recallAt5 0.700 is below its minimum 0.800"},
		{"threshold first, then regression", spec, succeeded("r2", "q1", 0.7, 0.8), succeeded("r1", "q1", 0.95, 0.8),
			metav1.ConditionFalse, v1alpha1.ReasonBelowThreshold, "below its minimum"},
		{"regressed past the default tolerance", spec, succeeded("r2", "q1", 0.85, 0.70), succeeded("r1", "q1", 0.85, 0.75),
			metav1.ConditionFalse, v1alpha1.ReasonRegressed, "since run r1 on the same questions: ndcgAt10 dropped from 0.750 to 0.700 (tolerance 0.020)"},
		{"a drop within the tolerance", spec, succeeded("r2", "q1", 0.88, 0.8), succeeded("r1", "q1", 0.9, 0.8),
			metav1.ConditionTrue, v1alpha1.ReasonThresholdsMet, ""},
		{"a drop on another question set is no regression", spec, succeeded("r2", "q2", 0.81, 0.5), succeeded("r1", "q1", 1, 1),
			metav1.ConditionTrue, v1alpha1.ReasonThresholdsMet, ""},
		{"a wider tolerance", &v1alpha1.RouteEvaluationSpec{RegressionTolerance: ptr.To(0.1)},
			succeeded("r2", "q1", 0.85, 0.70), succeeded("r1", "q1", 0.85, 0.75), metav1.ConditionTrue, v1alpha1.ReasonThresholdsMet, ""},
		{"a failed run", spec, &v1alpha1.EvaluationRun{Job: "r2", Result: runFailed, Message: "the route refused the identity"}, nil,
			metav1.ConditionFalse, v1alpha1.ReasonEvaluationFailed, "the route refused the identity"},
		{"an unmeasured gate fails", &v1alpha1.RouteEvaluationSpec{Thresholds: &v1alpha1.EvaluationThresholds{MinNotFound: ptr.To(0.5)}},
			succeeded("r1", "q1", 1, 1), nil, metav1.ConditionFalse, v1alpha1.ReasonBelowThreshold, "notFoundOnUnanswerable not measured"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := passingCondition(tc.spec, tc.last, tc.previous)
			if c.Type != v1alpha1.ConditionPassing || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
				t.Errorf("got %s/%s %q, want %s/%s containing %q", c.Status, c.Reason, c.Message, tc.status, tc.reason, tc.message)
			}
		})
	}
}

// Every quality figure counts for a regression, latency does not, and a
// figure one run lacks is not compared.
func TestRegressions(t *testing.T) {
	was := succeeded("r1", "q", 0.9, 0.9)
	was.Figures.GroundedRatio, was.Figures.LatencyP95Ms = ptr.To(0.9), 100
	now := succeeded("r2", "q", 0.9, 0.9)
	now.Figures.GroundedRatio, now.Figures.LatencyP95Ms, now.Figures.CitationRecall = ptr.To(0.5), 900, ptr.To(0.1)
	got := regressions(now, was, 0.02)
	if len(got) != 1 || !strings.HasPrefix(got[0], "groundedRatio dropped from 0.900 to 0.500") {
		t.Errorf("regressions = %v", got)
	}
	failed := &v1alpha1.EvaluationRun{Result: runFailed, QuestionsHash: "q"}
	if got := regressions(now, failed, 0.02); got != nil {
		t.Errorf("against a failed run: %v", got)
	}
}

func TestEvaluationKstatus(t *testing.T) {
	now := metav1.Now()
	conditions := []metav1.Condition{
		evaluationReadyCondition(nil, nil, nil),
		passingCondition(&v1alpha1.RouteEvaluationSpec{Thresholds: &v1alpha1.EvaluationThresholds{MinRecallAt5: ptr.To(0.9)}},
			succeeded("r1", "q", 0.5, 0.5), nil),
	}
	for i := range conditions {
		conditions[i].LastTransitionTime = now
	}
	reconciling, stalled := progressConditions(conditions, v1alpha1.ConditionReady, v1alpha1.ConditionPassing)
	if stalled.Status != metav1.ConditionTrue || stalled.Reason != v1alpha1.ReasonBelowThreshold || reconciling.Status != metav1.ConditionFalse {
		t.Errorf("a failing evaluation: reconciling %v, stalled %v", reconciling, stalled)
	}
	conditions[1] = passingCondition(&v1alpha1.RouteEvaluationSpec{}, nil, nil)
	reconciling, stalled = progressConditions(conditions, v1alpha1.ConditionReady, v1alpha1.ConditionPassing)
	if reconciling.Status != metav1.ConditionTrue || reconciling.Reason != v1alpha1.ReasonEvaluationPending || stalled.Status != metav1.ConditionFalse {
		t.Errorf("a first run pending: reconciling %v, stalled %v", reconciling, stalled)
	}
}
