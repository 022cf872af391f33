package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// readyStatus is the status of the Ready condition, "" when absent.
func readyStatus(conditions []metav1.Condition) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(conditions, v1alpha1.ConditionReady); c != nil {
		return c.Status
	}
	return ""
}

// isReady reports whether the Ready condition is True.
func isReady(conditions []metav1.Condition) bool {
	return readyStatus(conditions) == metav1.ConditionTrue
}
