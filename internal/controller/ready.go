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

// routeServesItsSpec reports whether every replica of the route runs its
// current spec: its status describes the latest generation, it is Ready
// and its Deployment is not rolling out (during a roll, old pods still
// answer behind the Service).
func routeServesItsSpec(route *v1alpha1.QueryRoute) bool {
	return route.Status.ConfigHash != "" && route.Status.ObservedGeneration == route.Generation &&
		isReady(route.Status.Conditions) && !meta.IsStatusConditionTrue(route.Status.Conditions, v1alpha1.ConditionProgressing)
}
