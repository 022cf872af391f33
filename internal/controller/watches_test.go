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
