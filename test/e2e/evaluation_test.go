package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// evaluate applies the sample RouteEvaluation (applySamples made its
// questions' ConfigMap) and waits for its first run, a Job on the node
// asking the route at its Service's name, to pass; then it raises the
// route's strict floor on purpose, so the run the change starts finds
// less, and waits for Regressed. Its thresholds are cut to the not-found
// one (none with the scripted models), so that the drop is judged as a
// regression, not as a threshold.
func (w *world) evaluate(ctx context.Context, t *testing.T) {
	if w.evaluation == nil {
		t.Fatal("config/samples holds no RouteEvaluation")
	}
	var firstJob string   // the first run's Job, once it passed
	var changed time.Time // when the route's floor was raised
	defer func() {
		if !t.Failed() {
			return
		}
		w.dumpEvaluation(ctx, t, w.evaluation.GetName(), firstJob, changed)
	}()
	sample := w.evaluation.DeepCopy()
	thresholds := map[string]any{"minNotFound": int64(1)}
	if w.scripted != nil {
		// The scripted embedder's hashed bags of words find the handbook's
		// common words in the sample's unanswerable question above the
		// scripted floors (notFoundOnUnanswerable 0): a real embedder's
		// task, which make e2e with the real models checks.
		thresholds = map[string]any{}
	}
	set(t, sample, thresholds, "spec", "thresholds")
	if err := w.c.Create(ctx, sample); err != nil {
		t.Fatalf("create the sample RouteEvaluation: %v", err)
	}
	started := time.Now()
	re := &v1alpha1.RouteEvaluation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sample.GetName()}}
	passing := w.waitPassing(ctx, t, re, func(c *metav1.Condition) bool { return c.Status == metav1.ConditionTrue })
	first := re.Status.LastRun
	if first == nil || first.Figures == nil || first.Figures.RecallAt5 == nil {
		t.Fatalf("the first run passed without figures: %+v", re.Status)
	}
	fmt.Fprintf(os.Stderr, "e2e: the sample evaluation's first run: %s in %.1f s (R@5 %.2f, %s)\n",
		passing.Reason, time.Since(started).Seconds(), *first.Figures.RecallAt5, first.Job)
	firstJob = first.Job

	route := &v1alpha1.QueryRoute{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support"}, route); err != nil {
		t.Fatal(err)
	}
	floor := 0.999 // nothing the route finds is that sure
	route.Spec.Retrieval.StrictFloor = &floor
	if err := w.c.Update(ctx, route); err != nil {
		t.Fatalf("narrow the route's strict floor: %v", err)
	}
	started = time.Now()
	changed = started
	failing := w.waitPassing(ctx, t, re, func(c *metav1.Condition) bool {
		return c.Status == metav1.ConditionFalse && re.Status.LastRun != nil && re.Status.LastRun.Job != first.Job
	})
	if failing.Reason != v1alpha1.ReasonRegressed {
		t.Fatalf("after the narrowed floor: Passing %s %s: %s; want Regressed", failing.Status, failing.Reason, failing.Message)
	}
	fmt.Fprintf(os.Stderr, "e2e: after the narrowed floor, the run the change started: %s in %.1f s: %s\n",
		failing.Reason, time.Since(started).Seconds(), failing.Message)
}

// waitPassing waits until re's Passing condition satisfies done.
func (w *world) waitPassing(ctx context.Context, t *testing.T, re *v1alpha1.RouteEvaluation, done func(*metav1.Condition) bool) metav1.Condition {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var got metav1.Condition
	waitFor(waitCtx, t, "the RouteEvaluation's run", func() (bool, string) {
		if err := w.c.Get(ctx, client.ObjectKeyFromObject(re), re); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(re.Status.Conditions, v1alpha1.ConditionPassing)
		if c == nil {
			return false, "no Passing condition"
		}
		got = *c
		return done(c), fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
	})
	return got
}
