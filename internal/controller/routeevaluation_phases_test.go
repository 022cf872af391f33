package controller

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// A run's Job the cache has not heard of yet is not a gone Job: the run
// stays active while the API server still has it, and fails only when
// neither has it.
func TestActiveRunOutlivesALaggingJobCache(t *testing.T) {
	evaluation := &v1alpha1.RouteEvaluation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "nightly"}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "nightly-run-1"}}
	observe := func(t *testing.T, server *batchv1.Job) *evaluationScope {
		t.Helper()
		cache, _ := fakeChildren(t, nil)
		apiServer, _ := fakeChildren(t, nil)
		if server != nil {
			apiServer, _ = fakeChildren(t, nil, server.DeepCopy())
		}
		r := &RouteEvaluationReconciler{Client: cache, APIReader: apiServer}
		s := &evaluationScope{evaluation: evaluation, now: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC),
			status: &v1alpha1.RouteEvaluationStatus{Active: &v1alpha1.EvaluationRun{Job: job.Name, Result: runRunning}}}
		if err := r.observeActiveRun(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Run("only the API server has it", func(t *testing.T) {
		if s := observe(t, job); s.status.Active == nil || s.finished != nil {
			t.Errorf("the run ended on a cache miss: last run %+v", s.status.LastRun)
		}
	})
	t.Run("neither has it", func(t *testing.T) {
		s := observe(t, nil)
		if s.status.Active != nil || s.finished == nil || s.finished.Result != runFailed ||
			s.finished.Message != "the run's Job nightly-run-1 is gone" {
			t.Errorf("a gone Job: active %+v, finished %+v", s.status.Active, s.finished)
		}
	})
}
