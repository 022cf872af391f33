package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// routeFacts is what a route reconcile found, reduced to what its
// conditions depend on.
type routeFacts struct {
	refErr   *referenceError
	applyErr error
	// desired replicas of the route.
	desired int32
	// rollout is nil until the Deployment exists.
	rollout *rolloutState
	// applied: this reconcile applied the children (the cache may not
	// show the Deployment yet).
	applied bool
	// anyCaller: identity headers are trusted from any caller.
	anyCaller bool
	// embedder is set while the store serves a generation of another
	// embedder than the route's pods embed questions with.
	embedder *embedderMismatch
	// analyzer is set while the store serves a generation of another
	// keyword analyzer than the route's pods prepare questions with.
	analyzer *analyzerMismatch
	// units is what the store's status says of the stored units' vectors
	// the grounding check reads; nil while the store was not read.
	units *groundingUnits
}

// rolloutState is the Deployment's progress towards the current template.
type rolloutState struct {
	observedCurrent bool // the Deployment controller saw the latest spec
	updated         int32
	ready           int32
	available       int32
	// total counts the Deployment's pods, old ones included.
	total int32
}

func routeFactsOf(s *routeScope) routeFacts {
	f := routeFacts{refErr: s.refErr, applyErr: s.applyErr, applied: s.applied, desired: v1alpha1.DefaultReplicas}
	if p := s.route.Spec.Auth.TrustedProxy; p != nil {
		f.anyCaller = p.InsecureAllowAnyCaller
	}
	if s.route.Spec.Replicas != nil {
		f.desired = *s.route.Spec.Replicas
	}
	if s.refErr == nil {
		f.embedder = embedderMismatchOf(s.inputs.store)
		f.analyzer = analyzerMismatchOf(s.inputs.store)
		f.units = groundingUnitsOf(s.inputs.store)
	}
	if d := s.deployment; d != nil {
		f.rollout = &rolloutState{
			// A Deployment read from the cache a moment after the apply
			// may still be the previous one: it is current only once it
			// carries this configuration's hash.
			observedCurrent: d.Status.ObservedGeneration >= d.Generation && d.Spec.Template.Annotations[configHashAnnotation] == s.configHash,
			updated:         d.Status.UpdatedReplicas,
			ready:           d.Status.ReadyReplicas,
			available:       d.Status.AvailableReplicas,
			total:           d.Status.Replicas,
		}
	}
	return f
}

// routeConditions derives Degraded, Progressing, Ready, InsecureAuth and
// GroundingUnits, in that order.
func routeConditions(f routeFacts) []metav1.Condition {
	return []metav1.Condition{degradedCondition(f), progressingCondition(f), routeReadyCondition(f), insecureAuthCondition(f),
		groundingUnitsCondition(f)}
}

// insecureAuthCondition is True while the route believes identity headers
// from any caller that reaches it: serving, but a warning an admin must see.
func insecureAuthCondition(f routeFacts) metav1.Condition {
	if f.anyCaller {
		return condition(v1alpha1.ConditionInsecureAuth, true, v1alpha1.ReasonAnyCallerAllowed,
			"spec.auth.trustedProxy.insecureAllowAnyCaller: any pod that reaches the route can claim any identity; set secretRef (and from) instead")
	}
	return condition(v1alpha1.ConditionInsecureAuth, false, v1alpha1.ReasonCallerAuthenticated,
		"callers prove who they are (a verified JWT or the proxy's shared secret)")
}

// degradedCondition is True when the effective configuration cannot be
// rendered or applied; the reason names the broken part.
func degradedCondition(f routeFacts) metav1.Condition {
	switch {
	case f.refErr != nil:
		return condition(v1alpha1.ConditionDegraded, true, f.refErr.Reason, f.refErr.Message+lastGoodNote(f))
	case f.applyErr != nil:
		return condition(v1alpha1.ConditionDegraded, true, v1alpha1.ReasonApplyFailed, f.applyErr.Error())
	}
	return condition(v1alpha1.ConditionDegraded, false, v1alpha1.ReasonReferencesResolved, "all references resolved and children applied")
}

// progressingCondition is True while the Deployment rolls out the current
// configuration.
func progressingCondition(f routeFacts) metav1.Condition {
	if f.rollout == nil && f.applied && f.refErr == nil && f.applyErr == nil {
		// Applied a moment ago: the cache has not seen the Deployment yet.
		return condition(v1alpha1.ConditionProgressing, true, v1alpha1.ReasonRollingOut,
			fmt.Sprintf("the Deployment was applied; 0/%d replicas updated", f.desired))
	}
	if f.refErr != nil || f.applyErr != nil || f.rollout == nil {
		reason := v1alpha1.ReasonApplyFailed
		if f.refErr != nil {
			reason = f.refErr.Reason
		}
		return condition(v1alpha1.ConditionProgressing, false, reason, "nothing is rolling out until the route's configuration can be applied")
	}
	if rolledOut(f) {
		return condition(v1alpha1.ConditionProgressing, false, v1alpha1.ReasonRolledOut,
			fmt.Sprintf("%d/%d replicas run the current configuration", f.rollout.updated, f.desired))
	}
	return condition(v1alpha1.ConditionProgressing, true, v1alpha1.ReasonRollingOut,
		fmt.Sprintf("%d/%d replicas updated, %d available", f.rollout.updated, f.desired, f.rollout.available))
}

// rolledOut is what `kubectl rollout status` waits for: every replica
// updated and available, and no old pod left serving.
func rolledOut(f routeFacts) bool {
	r := f.rollout
	return r.observedCurrent && r.updated >= f.desired && r.available >= f.desired && r.total <= r.updated
}

// routeReadyCondition is True when at least one replica serves the current
// configuration, which it cannot while the store serves a generation of
// another embedder or keyword analyzer.
func routeReadyCondition(f routeFacts) metav1.Condition {
	switch {
	case f.refErr != nil:
		return condition(v1alpha1.ConditionReady, false, f.refErr.Reason, f.refErr.Message+lastGoodNote(f))
	case f.applyErr != nil:
		return condition(v1alpha1.ConditionReady, false, v1alpha1.ReasonApplyFailed, f.applyErr.Error())
	case f.desired == 0:
		return condition(v1alpha1.ConditionReady, false, v1alpha1.ReasonScaledToZero, "spec.replicas is 0")
	case f.embedder != nil:
		return f.embedder.condition()
	case f.analyzer != nil:
		return f.analyzer.condition()
	case f.rollout == nil || !f.rollout.observedCurrent || f.rollout.updated == 0 || f.rollout.available == 0:
		ready := int32(0)
		if f.rollout != nil {
			ready = f.rollout.ready
		}
		return condition(v1alpha1.ConditionReady, false, v1alpha1.ReasonNoReadyReplicas,
			fmt.Sprintf("no replica serves the current configuration yet (%d/%d ready)", ready, f.desired))
	}
	return condition(v1alpha1.ConditionReady, true, v1alpha1.ReasonAvailable,
		fmt.Sprintf("%d/%d replicas available", f.rollout.available, f.desired))
}

// lastGoodNote tells the admin that existing pods keep their last config.
func lastGoodNote(f routeFacts) string {
	if f.rollout != nil {
		return "; running pods keep the last applied configuration"
	}
	return ""
}
