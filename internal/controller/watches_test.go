package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

func TestReferencedFactsChangedIgnoresStatusNoise(t *testing.T) {
	prompt := func(gen int64, ready metav1.ConditionStatus, hash string, routes int32) *v1alpha1.PlatformPrompt {
		p := &v1alpha1.PlatformPrompt{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
		p.Status = v1alpha1.PlatformPromptStatus{Hash: hash, Routes: routes,
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: ready}}}
		return p
	}
	base := prompt(1, metav1.ConditionTrue, "aaaa", 1)
	cases := []struct {
		name string
		new  *v1alpha1.PlatformPrompt
		want bool
	}{
		{"route count only", prompt(1, metav1.ConditionTrue, "aaaa", 2), false},
		{"spec changed", prompt(2, metav1.ConditionTrue, "aaaa", 1), true},
		{"readiness changed", prompt(1, metav1.ConditionFalse, "aaaa", 1), true},
		{"content hash changed (text from a ConfigMap)", prompt(1, metav1.ConditionTrue, "bbbb", 1), true},
	}
	for _, tc := range cases {
		if got := referencedFactsChanged.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: reconcile referrers = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An evaluation hears the end of its route's roll (it waits for it before
// a run), and not the route's other status changes.
func TestEvaluatedFactsChangedHearsTheEndOfARoll(t *testing.T) {
	route := func(progressing metav1.ConditionStatus, replicas int32) *v1alpha1.QueryRoute {
		r := &v1alpha1.QueryRoute{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		r.Status = v1alpha1.QueryRouteStatus{ObservedGeneration: 2, ConfigHash: "h2", Replicas: replicas, Conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue}, {Type: v1alpha1.ConditionProgressing, Status: progressing}}}
		return r
	}
	rolling := route(metav1.ConditionTrue, 1)
	for name, c := range map[string]struct {
		new  *v1alpha1.QueryRoute
		want bool
	}{
		"the roll ended":         {route(metav1.ConditionFalse, 1), true},
		"only the replica count": {route(metav1.ConditionTrue, 2), false},
	} {
		if got := evaluatedFactsChanged.Update(event.UpdateEvent{ObjectOld: rolling, ObjectNew: c.new}); got != c.want {
			t.Errorf("%s: reconcile evaluations = %v, want %v", name, got, c.want)
		}
	}
}
