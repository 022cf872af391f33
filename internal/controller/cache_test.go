package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// cached runs obj through the cache's transform for its kind.
func cached(t *testing.T, obj client.Object) client.Object {
	t.Helper()
	opts := CacheOptions(nil)
	transform := opts.DefaultTransform
	for kind, by := range opts.ByObject {
		if sameKind(kind, obj) {
			transform = by.Transform
		}
	}
	out, err := transform(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out.(client.Object)
}

func sameKind(a, b client.Object) bool {
	switch a.(type) {
	case *appsv1.Deployment:
		_, ok := b.(*appsv1.Deployment)
		return ok
	case *corev1.ConfigMap:
		_, ok := b.(*corev1.ConfigMap)
		return ok
	case *corev1.Service:
		_, ok := b.(*corev1.Service)
		return ok
	}
	return false
}

func ownedMeta(kind, apiVersion string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: "support", Namespace: "team", Generation: 3,
		Annotations:   map[string]string{appliedHashAnnotation: "h1"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: string(fieldOwner)}},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "support",
			UID: "u1", Controller: ptr.To(true)}},
	}
}

func TestCacheKeepsWhatReconcilesRead(t *testing.T) {
	route := v1alpha1.GroupVersion.String()
	spec := func() appsv1.DeploymentSpec {
		return appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{configHashAnnotation: "c1", "other": "x"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "route", Image: "ragroute"}}}}}
	}
	deployment := &appsv1.Deployment{
		ObjectMeta: ownedMeta("QueryRoute", route),
		Spec:       spec(),
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 3, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2},
	}
	got := cached(t, deployment).(*appsv1.Deployment)
	if len(got.Spec.Template.Spec.Containers) != 0 || got.ManagedFields != nil || len(got.Spec.Template.Annotations) != 1 {
		t.Errorf("a route's Deployment keeps its template or managed fields: %+v", got)
	}
	if got.Spec.Template.Annotations[configHashAnnotation] != "c1" {
		t.Errorf("a route's Deployment lost its config hash: %+v", got.Spec.Template.Annotations)
	}
	if got.Annotations[appliedHashAnnotation] != "h1" || got.Generation != 3 || got.Status.AvailableReplicas != 2 ||
		metav1.GetControllerOf(got) == nil || *got.Spec.Replicas != 2 {
		t.Errorf("a route's Deployment lost what reconciles read: %+v", got)
	}

	configMap := &corev1.ConfigMap{ObjectMeta: ownedMeta("QueryRoute", route), Data: map[string]string{"route.json": "{}"}}
	if got := cached(t, configMap).(*corev1.ConfigMap); got.Data != nil || got.Annotations[appliedHashAnnotation] != "h1" {
		t.Errorf("a route's ConfigMap: data %v, annotations %v", got.Data, got.Annotations)
	}

	service := &corev1.Service{ObjectMeta: ownedMeta("QueryRoute", route),
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "support"}, Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}}}
	if got := cached(t, service).(*corev1.Service); len(got.Spec.Ports) != 0 || got.Spec.Selector != nil ||
		got.Annotations[appliedHashAnnotation] != "h1" || metav1.GetControllerOf(got) == nil || got.ManagedFields != nil {
		t.Errorf("a route's Service: spec %+v, annotations %v, managed fields %v", got.Spec, got.Annotations, got.ManagedFields)
	}

	// Anything a route does not control is kept whole, managed fields aside.
	for _, owner := range []struct{ kind, apiVersion string }{{"KnowledgeStore", route}, {"QueryRoute", "other.io/v1"}, {"", ""}} {
		meta := ownedMeta(owner.kind, owner.apiVersion)
		if owner.kind == "" {
			meta.OwnerReferences = nil
		}
		source := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"platform.md": "Be brief."}}
		if got := cached(t, source).(*corev1.ConfigMap); got.Data["platform.md"] != "Be brief." || got.ManagedFields != nil {
			t.Errorf("ConfigMap owned by %q: data %v, managed fields %v", owner.kind, got.Data, got.ManagedFields)
		}
		other := &appsv1.Deployment{ObjectMeta: meta, Spec: spec()}
		if got := cached(t, other).(*appsv1.Deployment); len(got.Spec.Template.Spec.Containers) != 1 {
			t.Errorf("Deployment owned by %q lost its template", owner.kind)
		}
		otherService := &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		if got := cached(t, otherService).(*corev1.Service); len(got.Spec.Ports) != 1 {
			t.Errorf("Service owned by %q lost its spec", owner.kind)
		}
	}
}

// TestCacheWatchesOnlyTheGivenNamespaces: --watch-namespaces becomes the
// cache's DefaultNamespaces, and the per-kind entries leave their own
// namespaces unset so controller-runtime gives each watched namespace the
// kind's transform and the Secret label selector.
func TestCacheWatchesOnlyTheGivenNamespaces(t *testing.T) {
	if opts := CacheOptions(nil); opts.DefaultNamespaces != nil {
		t.Errorf("no namespaces: DefaultNamespaces %v, want nil (every namespace)", opts.DefaultNamespaces)
	}
	opts := CacheOptions([]string{"team-a", "", "team-b"})
	if len(opts.DefaultNamespaces) != 2 {
		t.Fatalf("DefaultNamespaces %v, want team-a and team-b", opts.DefaultNamespaces)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if _, ok := opts.DefaultNamespaces[ns]; !ok {
			t.Errorf("DefaultNamespaces lacks %s: %v", ns, opts.DefaultNamespaces)
		}
	}
	if opts.DefaultTransform == nil || len(opts.ByObject) != len(CacheOptions(nil).ByObject) {
		t.Fatalf("namespaces dropped the transforms: %d ByObject entries", len(opts.ByObject))
	}
	for obj, by := range opts.ByObject {
		if by.Namespaces != nil {
			t.Errorf("%T sets its own namespaces %v: they would override --watch-namespaces", obj, by.Namespaces)
		}
		if by.Transform == nil {
			t.Errorf("%T lost its transform", obj)
		}
		if _, ok := obj.(*corev1.Secret); ok && (by.Label == nil || !by.Label.Matches(labels.Set{secretUseLabel: secretUseValue}) || by.Label.Empty()) {
			t.Errorf("Secrets lost their label selector: %v", by.Label)
		}
	}
}

// TestCacheHoldsOnlyLabelledChildren: every kind the operator applies is
// cached only with the label every builder sets, so a user's objects of
// those kinds never are; the referenced-ConfigMap cache keeps the
// namespaces and holds names and versions alone.
func TestCacheHoldsOnlyLabelledChildren(t *testing.T) {
	opts := CacheOptions([]string{"team-a"})
	byKind := map[string]cache.ByObject{}
	for obj, by := range opts.ByObject {
		byKind[fmt.Sprintf("%T", obj)] = by
	}
	own := labels.Set{managedByLabel: managedByValue}
	for _, kind := range []client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}, &corev1.Service{}, &batchv1.Job{},
		&batchv1.CronJob{}, &networkingv1.NetworkPolicy{}, &policyv1.PodDisruptionBudget{}, &autoscalingv2.HorizontalPodAutoscaler{}} {
		by, ok := byKind[fmt.Sprintf("%T", kind)]
		if !ok || by.Label == nil || by.Label.Empty() || !by.Label.Matches(own) || by.Label.Matches(labels.Set{}) {
			t.Errorf("%T is cached without the %s=%s selector: %v", kind, managedByLabel, managedByValue, by.Label)
		}
	}
	for _, labelsOf := range []map[string]string{storeLabels(&v1alpha1.KnowledgeStore{}), routeLabels(&v1alpha1.QueryRoute{}),
		evaluationLabels(&v1alpha1.RouteEvaluation{})} {
		if labelsOf[managedByLabel] != managedByValue {
			t.Errorf("children labelled %v would not be cached", labelsOf)
		}
	}

	referenced := ReferencedConfigMapsOptions([]string{"team-a"})
	if _, ok := referenced.DefaultNamespaces["team-a"]; !ok || len(referenced.DefaultNamespaces) != 1 {
		t.Errorf("referenced ConfigMaps watch %v, want team-a", referenced.DefaultNamespaces)
	}
	meta := configMapMetadata()
	meta.ObjectMeta = metav1.ObjectMeta{Name: "prompts", Namespace: "team-a", UID: "u", ResourceVersion: "7",
		Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"big": strings.Repeat("x", 1000)},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}
	out, err := referenced.DefaultTransform(meta)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if got.Name != "prompts" || got.Namespace != "team-a" || got.UID != "u" || got.ResourceVersion != "7" ||
		got.Labels != nil || got.Annotations != nil || got.ManagedFields != nil || got.Kind != "ConfigMap" {
		t.Errorf("a referenced ConfigMap is kept as %+v", got)
	}
}

func TestParseNamespaces(t *testing.T) {
	for in, want := range map[string][]string{
		"":                nil,
		" , ":             nil,
		"team-a":          {"team-a"},
		"team-a, team-b,": {"team-a", "team-b"},
		"team-a,team-a,x": {"team-a", "x"},
	} {
		if got := ParseNamespaces(in); !slices.Equal(got, want) {
			t.Errorf("ParseNamespaces(%q) = %v, want %v", in, got, want)
		}
	}
}
