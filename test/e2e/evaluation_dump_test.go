package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// The labels of a RouteEvaluation's runs (internal/controller,
// routeevaluation_builders.go): every run's Job and pod carry the
// evaluation's name, and each pod its Job's name.
const (
	evaluationLabel    = "ragroute.io/routeevaluation"
	evaluationRunLabel = "ragroute.io/evaluation-run"
	// routePods selects the sample route's pods (editPrompt waits on them).
	routePods = "app.kubernetes.io/name=ragroute-route,app.kubernetes.io/instance=support"
	// configHashAnnotation is the route's config hash on its pods.
	configHashAnnotation = "ragroute.io/config-hash"
)

// dumpEvaluation logs what tells apart the ways the run a route change
// should start can fail to turn the evaluation Regressed in time: the
// test's own deadline ran out (its context bounds the whole test); no run
// started (the evaluation's Ready says why: the route not serving its new
// spec, a roll that never ended); a run started but has not finished (its
// Job and pod say where it is); or a run finished against the old config
// (a new lastRun with the first run's figures, the old route pod still
// reachable behind the Service: the route pods, kube-proxy's log). It
// reads with a context of its own, as the test's may be the one that ran
// out, and logs every read that fails instead of an empty part.
func (w *world) dumpEvaluation(ctx context.Context, t *testing.T, name, firstJob string, changed time.Time) {
	t.Helper()
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var b strings.Builder
	fmt.Fprintf(&b, "the test's context: %v", ctx.Err())
	if deadline, ok := ctx.Deadline(); ok {
		fmt.Fprintf(&b, " (deadline in %s)", time.Until(deadline).Round(time.Second))
	}
	fmt.Fprintf(&b, "; the first run's Job: %q", firstJob)
	if !changed.IsZero() {
		fmt.Fprintf(&b, "; the route's floor was raised %s ago (%s)", time.Since(changed).Round(time.Second), changed.UTC().Format(time.RFC3339))
	}
	b.WriteString("\n")
	w.dumpEvaluationStatus(readCtx, &b, name)
	w.dumpRoute(readCtx, &b, "support")
	w.dumpRuns(readCtx, &b, name, firstJob)
	w.dumpEvents(readCtx, &b, 40)
	fmt.Fprintf(&b, "kube-proxy's log, last lines:\n%s\n", lastLines(w.bed.Node.KubeProxyLog(), 20))
	fmt.Fprintf(&b, "operator logs, last lines:\n%s\n", lastLines(w.operatorLogs(readCtx), 80))
	t.Logf("the evaluation's state:\n%s", b.String())
}

// dumpEvaluationStatus writes the RouteEvaluation's whole status: its
// conditions with their times, and the active, last and previous runs
// with what each measured (the route's config hash, the store's
// generation) and its figures.
func (w *world) dumpEvaluationStatus(ctx context.Context, b *strings.Builder, name string) {
	re := &v1alpha1.RouteEvaluation{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, re); err != nil {
		fmt.Fprintf(b, "RouteEvaluation %s: %v\n", name, err)
		return
	}
	fmt.Fprintf(b, "RouteEvaluation %s: generation %d, status:\n%s\n", name, re.Generation, indentedJSON(re.Status))
}

// dumpRoute writes the route's generation and status, its Deployment's
// rollout and its pods (an old one still there, each one's config hash,
// their last lines): whether the route served its new spec, and since
// when.
func (w *world) dumpRoute(ctx context.Context, b *strings.Builder, name string) {
	route := &v1alpha1.QueryRoute{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, route); err != nil {
		fmt.Fprintf(b, "QueryRoute %s: %v\n", name, err)
	} else {
		fmt.Fprintf(b, "QueryRoute %s: generation %d, status (observedGeneration %d):\n%s\n",
			name, route.Generation, route.Status.ObservedGeneration, indentedJSON(route.Status))
	}
	d := &appsv1.Deployment{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		fmt.Fprintf(b, "Deployment %s: %v\n", name, err)
	} else {
		fmt.Fprintf(b, "Deployment %s: generation %d, template config hash %s, rolled out %t, status:\n%s\n",
			name, d.Generation, d.Spec.Template.Annotations[configHashAnnotation], rolledOut(d), indentedJSON(d.Status))
	}
	w.dumpPods(ctx, b, "the route's pods", routePods, 20, func(pod *corev1.Pod) string {
		return "config hash " + pod.Annotations[configHashAnnotation]
	})
}

// dumpRuns writes the evaluation's run Jobs, oldest first, and their
// pods, with the eval container's state (its termination message is the
// run's report) and its last log lines: whether a second run was
// started, when, and how far it got.
func (w *world) dumpRuns(ctx context.Context, b *strings.Builder, name, firstJob string) {
	selector := evaluationLabel + "=" + name
	jobs, err := w.cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		fmt.Fprintf(b, "the evaluation's Jobs: %v\n", err)
	} else {
		slices.SortFunc(jobs.Items, func(x, y batchv1.Job) int {
			return x.CreationTimestamp.Compare(y.CreationTimestamp.Time)
		})
		fmt.Fprintf(b, "the evaluation's Jobs: %d\n", len(jobs.Items))
		for _, job := range jobs.Items {
			writeJob(b, &job, job.Name == firstJob)
		}
	}
	w.dumpPods(ctx, b, "the evaluation's pods", selector, 40, func(pod *corev1.Pod) string {
		return "run " + pod.Labels[evaluationRunLabel]
	})
}

// dumpPods writes the pods selector selects (writePod), each with what
// names it among them and its last lines of log.
func (w *world) dumpPods(ctx context.Context, b *strings.Builder, what, selector string, lines int, name func(*corev1.Pod) string) {
	pods, err := w.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		fmt.Fprintf(b, "%s: %v\n", what, err)
		return
	}
	fmt.Fprintf(b, "%s: %d\n", what, len(pods.Items))
	for _, pod := range pods.Items {
		writePod(b, &pod)
		fmt.Fprintf(b, "    %s; logs, last lines:\n%s\n", name(&pod),
			indent(lastLines(w.bed.Node.PodLogs(pod.Namespace, pod.Name), lines), "      "))
	}
}

// writeJob writes a run's Job: when it was made, started and completed,
// its pod counts and its conditions.
func writeJob(b *strings.Builder, job *batchv1.Job, first bool) {
	which := ""
	if first {
		which = " (the first run)"
	}
	s := job.Status
	fmt.Fprintf(b, "  Job %s%s: created %s, started %s, completed %s; active %d, ready %d, succeeded %d, failed %d\n",
		job.Name, which, timeOf(&job.CreationTimestamp), timeOf(s.StartTime), timeOf(s.CompletionTime),
		s.Active, ptrOr(s.Ready, 0), s.Succeeded, s.Failed)
	for _, c := range s.Conditions {
		fmt.Fprintf(b, "    %s=%s %s at %s: %s\n", c.Type, c.Status, c.Reason, timeOf(&c.LastTransitionTime), c.Message)
	}
}

// writePod writes a pod's phase and times, the conditions it does not
// meet (unscheduled, not ready) and each container's state, with a
// terminated one's reason, exit code and termination message.
func writePod(b *strings.Builder, pod *corev1.Pod) {
	fmt.Fprintf(b, "  pod %s: %s, created %s, started %s", pod.Name, pod.Status.Phase,
		timeOf(&pod.CreationTimestamp), timeOf(pod.Status.StartTime))
	if pod.DeletionTimestamp != nil {
		fmt.Fprintf(b, ", deleting since %s", timeOf(pod.DeletionTimestamp))
	}
	fmt.Fprintf(b, ", IP %s\n", pod.Status.PodIP)
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			fmt.Fprintf(b, "    %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	for _, c := range pod.Status.ContainerStatuses {
		fmt.Fprintf(b, "    container %s: ready %t, restarts %d, ", c.Name, c.Ready, c.RestartCount)
		switch st := c.State; {
		case st.Terminated != nil:
			fmt.Fprintf(b, "terminated %s (exit %d) %s → %s, message: %s\n", st.Terminated.Reason, st.Terminated.ExitCode,
				timeOf(&st.Terminated.StartedAt), timeOf(&st.Terminated.FinishedAt), cut(st.Terminated.Message, 1500))
		case st.Running != nil:
			fmt.Fprintf(b, "running since %s\n", timeOf(&st.Running.StartedAt))
		case st.Waiting != nil:
			fmt.Fprintf(b, "waiting: %s: %s\n", st.Waiting.Reason, st.Waiting.Message)
		default:
			b.WriteString("no state yet\n")
		}
	}
}

// dumpEvents writes the namespace's last n events, oldest first: the
// evaluation's one per finished run ("run <Job>: …"), the Jobs' and pods'
// (scheduling, image, a failed create) and the Deployment's scaling.
func (w *world) dumpEvents(ctx context.Context, b *strings.Builder, n int) {
	events, err := w.cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(b, "events: %v\n", err)
		return
	}
	when := func(e *eventsv1.Event) time.Time {
		switch {
		case !e.EventTime.IsZero():
			return e.EventTime.Time
		case !e.DeprecatedLastTimestamp.IsZero():
			return e.DeprecatedLastTimestamp.Time
		}
		return e.CreationTimestamp.Time
	}
	items := events.Items
	slices.SortFunc(items, func(x, y eventsv1.Event) int { return when(&x).Compare(when(&y)) })
	items = items[max(0, len(items)-n):]
	fmt.Fprintf(b, "events in %s, last %d of %d:\n", ns, len(items), len(events.Items))
	for i := range items {
		e := &items[i]
		fmt.Fprintf(b, "  %s %s %s %s/%s: %s\n", when(e).UTC().Format("15:04:05.000"), e.Type, e.Reason,
			e.Regarding.Kind, e.Regarding.Name, e.Note)
	}
}

// indentedJSON is v as indented JSON, or why it is not.
func indentedJSON(v any) string {
	data, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		return fmt.Sprintf("  (%v)", err)
	}
	return "  " + string(data)
}

// timeOf is t in UTC to the second, "-" when unset.
func timeOf(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// ptrOr is *p, or or when p is nil.
func ptrOr[T any](p *T, or T) T {
	if p == nil {
		return or
	}
	return *p
}

// cut is s, at most n bytes of it.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// indent prefixes each line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
