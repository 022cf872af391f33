package controller

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

func TestAppliedHashIsStableAndFollowsTheDesiredState(t *testing.T) {
	in := fullInputs()
	data, err := marshalRouteConfig(renderRouteConfig(in))
	if err != nil {
		t.Fatal(err)
	}
	configHash := routeConfigHash(data, nil)
	deployment := func(image, configHash string) hashedChild {
		t.Helper()
		c, err := withAppliedHash(buildRouteDeployment(in.route, image, configHash, in.env))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := deployment("ragroute/ragroute:v0.1.0", configHash), deployment("ragroute/ragroute:v0.1.0", configHash)
	if a.hash == "" || a.hash != b.hash || a.name != in.route.Name {
		t.Fatalf("same desired Deployment hashed %q and %q (name %q)", a.hash, b.hash, a.name)
	}
	first, err := withAppliedHash(buildRouteConfigMap(in.route, data))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ { // map iteration order (labels) must not reach the hash
		c, err := withAppliedHash(buildRouteConfigMap(in.route, data))
		if err != nil {
			t.Fatal(err)
		}
		if c.hash != first.hash {
			t.Fatalf("ConfigMap hash changed between identical builds: %s, %s", c.hash, first.hash)
		}
	}
	if c := deployment("ragroute/ragroute:v0.2.0", configHash); c.hash == a.hash {
		t.Error("a new image left the Deployment's hash unchanged")
	}
	if c := deployment("ragroute/ragroute:v0.1.0", configHash+"x"); c.hash == a.hash {
		t.Error("a new config hash left the Deployment's hash unchanged")
	}

	// The hash is of the configuration without the annotation, which is
	// then on the object applied (and so on the child).
	plain := buildRouteDeployment(in.route, "ragroute/ragroute:v0.1.0", configHash, in.env)
	want, err := applyConfigHash(plain)
	if err != nil {
		t.Fatal(err)
	}
	if a.hash != want {
		t.Errorf("hash %s, want the plain builder's %s", a.hash, want)
	}
	if len(plain.Annotations) != 0 {
		t.Errorf("the builder itself annotates: %v", plain.Annotations)
	}
	applied := a.apply.(*appsv1ac.DeploymentApplyConfiguration)
	if got := applied.Annotations[appliedHashAnnotation]; got != a.hash {
		t.Errorf("applied Deployment carries %s=%q, want %q", appliedHashAnnotation, got, a.hash)
	}
	if got := applied.Spec.Template.Annotations[configHashAnnotation]; got != configHash {
		t.Errorf("pod template %s=%q, want %q", configHashAnnotation, got, configHash)
	}
}

func TestAppliedUpToDate(t *testing.T) {
	route := newRoute("ns", "support", "docs", "default")
	route.UID = "route-uid"
	other := newRoute("ns", "other", "docs", "default")
	other.UID = "other-uid"
	child := func(owner *v1alpha1.QueryRoute, hash string) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "support", UID: "child-uid"}}
		if owner != nil {
			d.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, v1alpha1.GroupVersion.WithKind("QueryRoute"))}
		}
		if hash != "" {
			d.Annotations = map[string]string{appliedHashAnnotation: hash}
		}
		return d
	}
	cases := []struct {
		name     string
		existing *appsv1.Deployment
		want     bool
	}{
		{"not in the cache", &appsv1.Deployment{}, false},
		{"ours, same hash", child(route, "h1"), true},
		{"ours, other hash", child(route, "h0"), false},
		{"ours, no hash (applied before the annotation)", child(route, ""), false},
		{"another route's, same hash", child(other, "h1"), false},
		{"nobody's, same hash", child(nil, "h1"), false},
	}
	for _, tc := range cases {
		if got := appliedUpToDate(tc.existing, route, "h1"); got != tc.want {
			t.Errorf("%s: appliedUpToDate = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRecomputedStatusIsUnchanged: a route's status recomputed from the same
// facts, later, equals the stored one, so applyStatus skips the write; any
// change in it does not.
func TestRecomputedStatusIsUnchanged(t *testing.T) {
	stored := newRoute("ns", "support", "docs", "default")
	stored.Generation = 3
	facts := routeFacts{desired: 1, rollout: &rolloutState{observedCurrent: true, updated: 1, ready: 1, available: 1}}
	compute := func(route *v1alpha1.QueryRoute, f routeFacts, now time.Time) *v1alpha1.QueryRouteStatus {
		status := route.Status.DeepCopy()
		status.ObservedGeneration = route.Generation
		status.ConfigHash, status.Endpoint = "abc", routeEndpoint(route)
		status.Replicas, status.ReadyReplicas = 1, 1
		for _, c := range routeConditions(f) {
			setCondition(&status.Conditions, c, route.Generation, now)
		}
		return status
	}
	// What the API server stores: times to the second.
	first := compute(stored, facts, time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.UTC))
	for i := range first.Conditions {
		first.Conditions[i].LastTransitionTime = metav1.NewTime(first.Conditions[i].LastTransitionTime.Truncate(time.Second))
	}
	stored.Status = *first

	unchanged := func(status *v1alpha1.QueryRouteStatus) bool {
		t.Helper()
		fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := statusUnchanged(stored, fields)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	later := time.Date(2026, 11, 30, 11, 0, 0, 987654321, time.UTC)
	if !unchanged(compute(stored, facts, later)) {
		t.Error("status recomputed from the same facts differs from the stored one")
	}

	notReady := facts
	notReady.rollout = &rolloutState{observedCurrent: true, updated: 1}
	if unchanged(compute(stored, notReady, later)) {
		t.Error("a condition change was taken for no change")
	}
	newGeneration := stored.DeepCopy()
	newGeneration.Generation = 4
	if unchanged(compute(newGeneration, facts, later)) {
		t.Error("a new observedGeneration was taken for no change")
	}
	replicas := compute(stored, facts, later)
	replicas.ReadyReplicas = 0
	if unchanged(replicas) {
		t.Error("a readyReplicas change was taken for no change")
	}

	empty := newRoute("ns", "fresh", "docs", "default")
	fields, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1alpha1.QueryRouteStatus{})
	if ok, err := statusUnchanged(empty, fields); err != nil || !ok {
		t.Errorf("an empty status against none: unchanged %v, %v", ok, err)
	}
	if unchangedFresh, _ := statusUnchanged(empty, mustUnstructured(t, compute(empty, facts, later))); unchangedFresh {
		t.Error("a first status was taken for no change")
	}
}

func mustUnstructured(t *testing.T, obj any) map[string]any {
	t.Helper()
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return fields
}

func TestLastConnectedTimeOnlyWhenTheStoreBecomesConnected(t *testing.T) {
	connected := []metav1.Condition{{Type: v1alpha1.ConditionConnected, Status: metav1.ConditionTrue}}
	unreachable := []metav1.Condition{{Type: v1alpha1.ConditionConnected, Status: metav1.ConditionFalse}}
	unknown := []metav1.Condition{{Type: v1alpha1.ConditionConnected, Status: metav1.ConditionUnknown}}
	stamped := &metav1.Time{Time: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	cases := []struct {
		name   string
		before []metav1.Condition
		last   *metav1.Time
		want   bool
	}{
		{"first probe", nil, nil, true},
		{"recheck while connected", connected, stamped, false},
		{"back after Milvus was unreachable", unreachable, stamped, true},
		{"a Secret came back", unknown, stamped, true},
		{"connected but never stamped", connected, nil, true},
	}
	for _, tc := range cases {
		if got := becameConnected(tc.before, tc.last); got != tc.want {
			t.Errorf("%s: becameConnected = %v, want %v", tc.name, got, tc.want)
		}
	}
}
