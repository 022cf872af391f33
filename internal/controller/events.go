package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// recordReadyTransition emits an event when the Ready condition changes
// status or reason: the transitions an admin wants in `kubectl describe`.
func recordReadyTransition(recorder events.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
	if recorder == nil {
		return
	}
	now := meta.FindStatusCondition(after, v1alpha1.ConditionReady)
	if now == nil || !readyNews(meta.FindStatusCondition(before, v1alpha1.ConditionReady), now) {
		return
	}
	eventType := corev1.EventTypeNormal
	if now.Status != metav1.ConditionTrue {
		eventType = corev1.EventTypeWarning
	}
	recorder.Eventf(obj, nil, eventType, now.Reason, "Reconcile", "%s", now.Message)
}

// readyNews says whether a Ready condition is worth an event: a change of
// status or reason. A new object still waiting for its first pods is not:
// every route starts so, and a warning for each (1,000 events for 1,000
// routes) would be noise and load; its turning Ready, or any other reason
// (a missing reference, a refused apply), is reported.
func readyNews(was, now *metav1.Condition) bool {
	if was == nil {
		return now.Status == metav1.ConditionTrue || now.Reason != v1alpha1.ReasonNoReadyReplicas
	}
	return was.Status != now.Status || was.Reason != now.Reason
}

// recordInsecureAuth warns when a route starts trusting any caller.
func recordInsecureAuth(recorder events.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
	now := meta.FindStatusCondition(after, v1alpha1.ConditionInsecureAuth)
	if recorder == nil || now == nil || now.Status != metav1.ConditionTrue || meta.IsStatusConditionTrue(before, v1alpha1.ConditionInsecureAuth) {
		return
	}
	recorder.Eventf(obj, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", now.Message)
}

// recordTruncation warns when the serving generation's count of chunks
// embedded cut (status.truncatedChunks) changes to a number above 0:
// once per count, not on every reconcile.
func recordTruncation(recorder events.EventRecorder, obj runtime.Object, before, after *int64) {
	if recorder == nil || after == nil || *after == 0 || (before != nil && *before == *after) {
		return
	}
	recorder.Eventf(obj, nil, corev1.EventTypeWarning, "ChunksTruncated", "Reconcile", "%s", truncatedProblem(*after))
}

// recordRefusal emits a Warning when the ingestion's count of refused
// documents changes to a number above 0.
func recordRefusal(recorder events.EventRecorder, obj runtime.Object, before, after *int64) {
	if recorder == nil || after == nil || *after == 0 || (before != nil && *before == *after) {
		return
	}
	recorder.Eventf(obj, nil, corev1.EventTypeWarning, "DocumentsRefused", "Reconcile", "%s", refusedProblem(*after))
}
