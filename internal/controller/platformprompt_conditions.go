package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// promptReadyCondition is Ready for a prompt: its text resolved and valid.
func promptReadyCondition(refErr *referenceError, hash string) metav1.Condition {
	if refErr != nil {
		return condition(v1alpha1.ConditionReady, false, refErr.Reason, refErr.Message)
	}
	return condition(v1alpha1.ConditionReady, true, v1alpha1.ReasonValid, "prompt content hash "+hash)
}
