package controller

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// Results of a run (EvaluationRun.Result).
const (
	runRunning   = "Running"
	runSucceeded = "Succeeded"
	runFailed    = "Failed"
)

// evaluationFigure is one figure of a run's summary, by its JSON name.
type evaluationFigure struct {
	name  string
	value func(*v1alpha1.EvaluationFigures) *float64
}

// qualityFigures are the figures a regression is judged on (latency is
// not: it moves with the cluster's load, not with the route).
var qualityFigures = []evaluationFigure{
	{"recallAt1", func(f *v1alpha1.EvaluationFigures) *float64 { return f.RecallAt1 }},
	{"recallAt5", func(f *v1alpha1.EvaluationFigures) *float64 { return f.RecallAt5 }},
	{"recallAt10", func(f *v1alpha1.EvaluationFigures) *float64 { return f.RecallAt10 }},
	{"mrr", func(f *v1alpha1.EvaluationFigures) *float64 { return f.MRR }},
	{"ndcgAt10", func(f *v1alpha1.EvaluationFigures) *float64 { return f.NDCGAt10 }},
	{"fileRecallAt5", func(f *v1alpha1.EvaluationFigures) *float64 { return f.FileRecallAt5 }},
	{"notFoundOnUnanswerable", func(f *v1alpha1.EvaluationFigures) *float64 { return f.NotFoundOnUnanswerable }},
	{"groundedRatio", func(f *v1alpha1.EvaluationFigures) *float64 { return f.GroundedRatio }},
	{"citationPrecision", func(f *v1alpha1.EvaluationFigures) *float64 { return f.CitationPrecision }},
	{"citationRecall", func(f *v1alpha1.EvaluationFigures) *float64 { return f.CitationRecall }},
}

// thresholdMisses names each threshold the figures miss. A figure the run
// did not measure misses its threshold: a gate that cannot be checked
// does not pass (as `eval-route` decides).
func thresholdMisses(figures *v1alpha1.EvaluationFigures, t *v1alpha1.EvaluationThresholds) []string {
	if t == nil {
		return nil
	}
	if figures == nil {
		figures = &v1alpha1.EvaluationFigures{}
	}
	gates := []struct {
		name  string
		min   *float64
		value *float64
	}{
		{"recallAt5", t.MinRecallAt5, figures.RecallAt5},
		{"ndcgAt10", t.MinNDCG10, figures.NDCGAt10},
		{"groundedRatio", t.MinGroundedRatio, figures.GroundedRatio},
		{"notFoundOnUnanswerable", t.MinNotFound, figures.NotFoundOnUnanswerable},
	}
	var out []string
	for _, g := range gates {
		switch {
		case g.min == nil:
		case g.value == nil:
			out = append(out, fmt.Sprintf("%s not measured (minimum %.3f)", g.name, *g.min))
		case *g.value < *g.min:
			out = append(out, fmt.Sprintf("%s %.3f is below its minimum %.3f", g.name, *g.value, *g.min))
		}
	}
	return out
}

// regressions names each quality figure of last that dropped by more than
// tolerance from previous. Runs compare only when both succeeded on the
// same question set: another set measures something else.
func regressions(last, previous *v1alpha1.EvaluationRun, tolerance float64) []string {
	if last == nil || previous == nil || last.Result != runSucceeded || previous.Result != runSucceeded ||
		last.QuestionsHash == "" || last.QuestionsHash != previous.QuestionsHash || last.Figures == nil || previous.Figures == nil {
		return nil
	}
	var out []string
	for _, f := range qualityFigures {
		now, was := f.value(last.Figures), f.value(previous.Figures)
		if now == nil || was == nil {
			continue
		}
		// A small epsilon: 0.8 - 0.78 is 0.0200000000000000178 in floats.
		if *was-*now > tolerance+1e-9 {
			out = append(out, fmt.Sprintf("%s dropped from %.3f to %.3f", f.name, *was, *now))
		}
	}
	return out
}

// regressionTolerance is the spec's, defaulted.
func regressionTolerance(spec *v1alpha1.RouteEvaluationSpec) float64 {
	if spec.RegressionTolerance == nil {
		return v1alpha1.DefaultEvaluationRegressionTolerance
	}
	return *spec.RegressionTolerance
}

// passingCondition judges the last finished run: True when it met every
// threshold and no figure regressed since the run before it; False with
// BelowThreshold, Regressed (thresholds first: they are the contract) or
// EvaluationFailed; Unknown until a run finished.
func passingCondition(spec *v1alpha1.RouteEvaluationSpec, last, previous *v1alpha1.EvaluationRun) metav1.Condition {
	if last == nil {
		return metav1.Condition{Type: v1alpha1.ConditionPassing, Status: metav1.ConditionUnknown,
			Reason: v1alpha1.ReasonEvaluationPending, Message: "no run has finished yet"}
	}
	if last.Result == runFailed {
		return condition(v1alpha1.ConditionPassing, false, v1alpha1.ReasonEvaluationFailed,
			"the last run could not be made: "+last.Message)
	}
	if misses := thresholdMisses(last.Figures, spec.Thresholds); len(misses) > 0 {
		return condition(v1alpha1.ConditionPassing, false, v1alpha1.ReasonBelowThreshold, strings.Join(misses, "; "))
	}
	if dropped := regressions(last, previous, regressionTolerance(spec)); len(dropped) > 0 {
		return condition(v1alpha1.ConditionPassing, false, v1alpha1.ReasonRegressed,
			fmt.Sprintf("since run %s on the same questions: %s (tolerance %.3f)", previous.Job, strings.Join(dropped, "; "), regressionTolerance(spec)))
	}
	return condition(v1alpha1.ConditionPassing, true, v1alpha1.ReasonThresholdsMet, "the last run met its thresholds and no figure regressed")
}

// evaluationReadyCondition says whether the evaluation can run: its route
// serves, its questions and identity resolve, its Job could be written.
func evaluationReadyCondition(refErr *referenceError, applyErr error, active *v1alpha1.EvaluationRun) metav1.Condition {
	switch {
	case refErr != nil:
		return condition(v1alpha1.ConditionReady, false, refErr.Reason, refErr.Message)
	case applyErr != nil:
		return condition(v1alpha1.ConditionReady, false, v1alpha1.ReasonApplyFailed, applyErr.Error())
	case active != nil:
		return condition(v1alpha1.ConditionReady, true, v1alpha1.ReasonEvaluationRunning, "run "+active.Job+" is in progress")
	}
	return condition(v1alpha1.ConditionReady, true, v1alpha1.ReasonAvailable, "the route, the questions and the identity resolve")
}
