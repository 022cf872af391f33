package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// fakeChildren is a fake API server holding objs, and the writes made to
// it; refuse, when not nil, is its answer to every apply.
func fakeChildren(t *testing.T, refuse error, objs ...client.Object) (client.Client, func() []string) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var writes []string
	record := func(verb string, obj any) {
		mu.Lock()
		defer mu.Unlock()
		writes = append(writes, fmt.Sprintf("%s %T", verb, obj))
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			record("create", obj)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			record("update", obj)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			record("patch", obj)
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			record("apply", obj)
			if refuse != nil {
				return refuse
			}
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			record("delete", obj)
			return c.Delete(ctx, obj, opts...)
		},
	}).Build()
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := writes
		writes = nil
		return out
	}
	return c, taken
}

// ingestingStore is a store with one source, as the API server holds it.
func ingestingStore() *v1alpha1.KnowledgeStore {
	store := newStore("ns", "docs", "http://m:19530")
	store.UID = "store-uid"
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Sources: []v1alpha1.IngestionSource{
		{Name: "faq", ConfigMap: &v1alpha1.LocalObjectRef{Name: "faq-md"}},
	}}
	return store
}

// controlledBy makes obj a child store controls, as the API server holds it.
func controlledBy[T client.Object](obj T, store *v1alpha1.KnowledgeStore) T {
	obj.SetUID(types.UID(obj.GetName() + "-uid"))
	obj.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(store, v1alpha1.GroupVersion.WithKind("KnowledgeStore"))})
	return obj
}

func TestChildApplierRefusesAForeignChildBeforeAnyWrite(t *testing.T) {
	store := ingestingStore()
	job := buildIngestJob(store, testRouteImage, "0123456789abcdef", nil)
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: *job.Name}}
	c, writes := fakeChildren(t, nil, foreign)

	applier := childApplier{client: c, owner: store, ownerKind: "store"}
	err := applier.apply(context.Background(), []child{
		{"ingest ConfigMap", &corev1.ConfigMap{}, ingestConfigMapName(store), desiredState(buildIngestConfigMap(store, []byte("{}")))},
		{"ingest Job", &batchv1.Job{}, *job.Name, desiredState(job)},
	})
	refErr, ok := asReferenceError(err)
	if !ok || refErr.Reason != v1alpha1.ReasonChildConflict {
		t.Fatalf("apply over a foreign Job: %v, want a %s referenceError", err, v1alpha1.ReasonChildConflict)
	}
	want := fmt.Sprintf(`ingest Job %q exists and is not owned by this store; rename the store or remove it`, *job.Name)
	if refErr.Message != want {
		t.Errorf("message %q, want %q", refErr.Message, want)
	}
	// The ConfigMap, first in the chain, is not applied either: nothing is
	// written while a child is someone else's.
	if w := writes(); len(w) != 0 {
		t.Errorf("writes before the conflict was reported: %v", w)
	}
	got := &batchv1.Job{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(foreign), got); err != nil {
		t.Fatal(err)
	}
	if len(got.OwnerReferences) != 0 {
		t.Errorf("the foreign Job was adopted: %v", got.OwnerReferences)
	}
}

func TestChildApplierWritesOnlyWhatChanged(t *testing.T) {
	store := ingestingStore()
	configMap := buildIngestConfigMap(store, []byte("{}"))
	hashed, err := desiredState(configMap)()
	if err != nil {
		t.Fatal(err)
	}
	upToDate := controlledBy(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: hashed.name,
		Annotations: map[string]string{appliedHashAnnotation: hashed.hash}}}, store)
	unscheduled := controlledBy(&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: ingestCronJobName(store)}}, store)
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "stray"}}
	c, writes := fakeChildren(t, nil, upToDate, unscheduled, stray)

	job := buildIngestJob(store, testRouteImage, "0123456789abcdef", nil)
	var noCron *batchv1ac.CronJobApplyConfiguration
	var noConfigMap *corev1ac.ConfigMapApplyConfiguration
	applier := childApplier{client: c, owner: store, ownerKind: "store"}
	err = applier.apply(context.Background(),
		[]child{
			{"ingest ConfigMap", &corev1.ConfigMap{}, hashed.name, desiredState(buildIngestConfigMap(store, []byte("{}")))},
			{"ingest Job", &batchv1.Job{}, *job.Name, desiredState(job)},
			{"ingest CronJob", &batchv1.CronJob{}, ingestCronJobName(store), desiredState(noCron)},
		},
		// An unwanted child the owner does not control is left alone, and
		// is no conflict.
		[]child{{"ConfigMap", &corev1.ConfigMap{}, "stray", desiredState(noConfigMap)}},
	)
	if err != nil {
		t.Fatal(err)
	}
	w := writes()
	slices.Sort(w)
	if want := []string{"apply *v1.JobApplyConfiguration", "delete *v1.CronJob"}; !slices.Equal(w, want) {
		t.Errorf("writes %v, want %v", w, want)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(stray), &corev1.ConfigMap{}); err != nil {
		t.Errorf("the stray ConfigMap: %v", err)
	}
	applied := &batchv1.Job{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: *job.Name}, applied); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(applied, store) || applied.Annotations[appliedHashAnnotation] == "" {
		t.Errorf("applied Job: owners %v, annotations %v", applied.OwnerReferences, applied.Annotations)
	}
	if !strings.HasPrefix(applied.Name, "docs-ingest-") {
		t.Errorf("applied Job %s", applied.Name)
	}
}

func TestChildApplierReportsARefusedWrite(t *testing.T) {
	store := ingestingStore()
	quota := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "docs-ingest-0123456789", errors.New("exceeded quota"))
	c, _ := fakeChildren(t, quota)
	job := buildIngestJob(store, testRouteImage, "0123456789abcdef", nil)
	applier := childApplier{client: c, owner: store, ownerKind: "store"}
	err := applier.apply(context.Background(), []child{{"ingest Job", &batchv1.Job{}, *job.Name, desiredState(job)}})
	if !isRefusedWrite(err) || !strings.HasPrefix(err.Error(), "apply ingest Job "+*job.Name+": ") || !apierrors.IsForbidden(err) {
		t.Errorf("a refused apply: %v, want a refusedWrite naming the Job and wrapping the API error", err)
	}
}
