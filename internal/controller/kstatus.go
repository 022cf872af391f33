package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// Reconciling and Stalled, kstatus' conditions (Flux, `kubectl wait`,
// cli-utils), summarise each kind's own conditions: Stalled names a
// condition that needs a change to clear, Reconciling one the operator is
// still working through; Ready alone says neither. GitOps tools read them
// (with status.observedGeneration) to tell in progress from failed.

// stalledReasons are the reasons a change by someone must clear: a missing
// or unreadable reference, a spec the operator cannot render or apply, a
// failed ingestion, a schema that does not match, a collection of another
// store, an evaluation that fails.
var stalledReasons = map[string]bool{
	v1alpha1.ReasonSecretNotFound: true, v1alpha1.ReasonSecretKeyNotFound: true, v1alpha1.ReasonSecretNotLabeled: true,
	v1alpha1.ReasonSecretNotAllowedForHost: true, v1alpha1.ReasonConfigMapNotFound: true, v1alpha1.ReasonConfigMapKeyNotFound: true,
	v1alpha1.ReasonKnowledgeStoreMissing: true, v1alpha1.ReasonPlatformPromptMissing: true,
	v1alpha1.ReasonRenderFailed: true, v1alpha1.ReasonApplyFailed: true, v1alpha1.ReasonChildConflict: true,
	v1alpha1.ReasonImageNotAllowed: true, v1alpha1.ReasonInsecureProxyAuthNotAllowed: true, v1alpha1.ReasonInvalidPrompt: true,
	v1alpha1.ReasonIngestionFailed: true, v1alpha1.ReasonIngestionTimedOut: true, v1alpha1.ReasonSchemaMismatch: true,
	v1alpha1.ReasonCollectionOwnedByAnotherStore: true,
	// A RouteEvaluation whose route is gone, whose identity the route
	// cannot take, or whose last run failed or missed: it stays so until
	// someone changes the route, the evaluation, or a later run passes.
	v1alpha1.ReasonQueryRouteMissing: true, v1alpha1.ReasonIdentityNotSupported: true, v1alpha1.ReasonInvalidSchedule: true,
	v1alpha1.ReasonBelowThreshold: true, v1alpha1.ReasonRegressed: true, v1alpha1.ReasonEvaluationFailed: true,
}

// healthyWhenFalse are the condition types whose True is the problem.
var healthyWhenFalse = map[string]bool{v1alpha1.ConditionDegraded: true}

// progressConditions derives Reconciling and Stalled from conditions: the
// first condition of watch (in order) not in its healthy state (True, or
// False for Degraded) decides. Its reason stalls when stalledReasons has
// it, else the object is reconciling; with all healthy, neither.
func progressConditions(conditions []metav1.Condition, watch ...string) (reconciling, stalled metav1.Condition) {
	reconciling = condition(v1alpha1.ConditionReconciling, false, v1alpha1.ReasonAvailable, "the operator has nothing left to do")
	stalled = condition(v1alpha1.ConditionStalled, false, v1alpha1.ReasonAvailable, "nothing blocks the operator")
	for _, t := range watch {
		c := meta.FindStatusCondition(conditions, t)
		switch {
		case c == nil:
			reconciling = condition(v1alpha1.ConditionReconciling, true, "Pending", t+" is not reported yet")
			return reconciling, stalled
		case (c.Status == metav1.ConditionTrue) != healthyWhenFalse[t]:
			continue
		case stalledReasons[c.Reason]:
			stalled = condition(v1alpha1.ConditionStalled, true, c.Reason, c.Message)
			return reconciling, stalled
		default:
			reconciling = condition(v1alpha1.ConditionReconciling, true, c.Reason, c.Message)
			return reconciling, stalled
		}
	}
	return reconciling, stalled
}

// setProgressConditions sets Reconciling and Stalled from the conditions
// in watch order.
func setProgressConditions(conditions *[]metav1.Condition, generation int64, now time.Time, watch ...string) {
	reconciling, stalled := progressConditions(*conditions, watch...)
	setCondition(conditions, reconciling, generation, now)
	setCondition(conditions, stalled, generation, now)
}
