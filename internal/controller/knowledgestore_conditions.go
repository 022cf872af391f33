package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// storeCheck is what one KnowledgeStore reconcile found.
type storeCheck struct {
	uri      string
	refErr   *referenceError // a Secret reference is broken; Milvus was not tried
	probeErr error           // Milvus did not answer
	version  string          // Milvus' version when it answered
}

func (c storeCheck) connected() bool { return c.refErr == nil && c.probeErr == nil }

// storeConditions derives the conditions this reconciler owns, in order:
// Connected, then Ready. Ready waits only on the connection for now; the
// ingestion controller's SchemaReady and Indexed join it when they exist.
func storeConditions(c storeCheck) []metav1.Condition {
	var connected metav1.Condition
	switch {
	case c.refErr != nil:
		connected = metav1.Condition{Type: v1alpha1.ConditionConnected, Status: metav1.ConditionUnknown,
			Reason: c.refErr.Reason, Message: "not checked: " + c.refErr.Message}
	case c.probeErr != nil:
		connected = condition(v1alpha1.ConditionConnected, false, v1alpha1.ReasonMilvusUnreachable, c.probeErr.Error())
	default:
		connected = condition(v1alpha1.ConditionConnected, true, v1alpha1.ReasonConnected,
			fmt.Sprintf("Milvus %s at %s answered", c.version, c.uri))
	}

	var ready metav1.Condition
	switch {
	case c.refErr != nil:
		ready = condition(v1alpha1.ConditionReady, false, c.refErr.Reason, c.refErr.Message)
	case c.probeErr != nil:
		ready = condition(v1alpha1.ConditionReady, false, v1alpha1.ReasonMilvusUnreachable,
			"Milvus at "+c.uri+" is unreachable: "+c.probeErr.Error())
	default:
		ready = condition(v1alpha1.ConditionReady, true, v1alpha1.ReasonConnected, "Milvus at "+c.uri+" answered")
	}
	return []metav1.Condition{connected, ready}
}
