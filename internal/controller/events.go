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
	if now == nil {
		return
	}
	if was := meta.FindStatusCondition(before, v1alpha1.ConditionReady); was != nil &&
		was.Status == now.Status && was.Reason == now.Reason {
		return
	}
	eventType := corev1.EventTypeNormal
	if now.Status != metav1.ConditionTrue {
		eventType = corev1.EventTypeWarning
	}
	recorder.Eventf(obj, nil, eventType, now.Reason, "Reconcile", "%s", now.Message)
}
