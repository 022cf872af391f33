package controller

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// writeCounter is a client that reads the API server directly (no cache)
// and counts every write request it is asked to make.
type writeCounter struct {
	client.Client
	mu     sync.Mutex
	writes []string
}

func (s *suite) countingClient(t *testing.T) *writeCounter {
	t.Helper()
	direct, err := client.NewWithWatch(s.config, client.Options{Scheme: s.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w := &writeCounter{}
	record := func(what string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.writes = append(w.writes, what)
	}
	name := func(obj any) string { return fmt.Sprintf("%T", obj) }
	w.Client = interceptor.NewClient(direct, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			record("create " + name(obj))
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			record("update " + name(obj))
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			record("patch " + name(obj))
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			record("apply " + name(obj))
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			record("delete " + name(obj))
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			record("update " + name(obj) + "/" + sub)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			record("patch " + name(obj) + "/" + sub)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			record("apply " + name(obj) + "/" + sub)
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	return w
}

// take returns the writes counted so far and forgets them.
func (w *writeCounter) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.writes
	w.writes = nil
	return out
}

// resourceVersions reads the resourceVersion of each object.
func (s *suite) resourceVersions(t *testing.T, ns string, objs map[string]client.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, obj := range objs {
		if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatalf("get %T %s: %v", obj, name, err)
		}
		out[fmt.Sprintf("%T %s", obj, name)] = obj.GetResourceVersion()
	}
	return out
}

// settled waits until the resourceVersions of objs have not changed for a
// second: the manager is done with them.
func (s *suite) settled(t *testing.T, ns string, objs func() map[string]client.Object) map[string]string {
	t.Helper()
	last, since := s.resourceVersions(t, ns, objs()), time.Now()
	eventually(t, waitFor, "the manager done writing", func() error {
		now := s.resourceVersions(t, ns, objs())
		if fmt.Sprint(now) != fmt.Sprint(last) {
			last, since = now, time.Now()
		}
		if time.Since(since) < time.Second {
			return fmt.Errorf("written %s ago", time.Since(since))
		}
		return nil
	})
	return last
}

// TestUnchangedRouteIsNotWrittenAgain reconciles a route whose children and
// status are up to date, twice, with a reconciler of its own: neither
// reconcile writes anything, and no object changes.
func TestUnchangedRouteIsNotWrittenAgain(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	s.routeWorld(t, ns)
	s.markRolledOut(t, s.deployment(t, ns, "support"))
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	objs := func() map[string]client.Object {
		return map[string]client.Object{"support": &v1alpha1.QueryRoute{}, "support-route": &corev1.ConfigMap{}}
	}
	children := func() map[string]client.Object {
		return map[string]client.Object{"support": &appsv1.Deployment{}}
	}
	services := func() map[string]client.Object { return map[string]client.Object{"support": &corev1.Service{}} }
	all := func() map[string]string {
		out := s.resourceVersions(t, ns, objs())
		for k, v := range s.resourceVersions(t, ns, children()) {
			out[k] = v
		}
		for k, v := range s.resourceVersions(t, ns, services()) {
			out[k] = v
		}
		return out
	}
	s.settled(t, ns, objs)
	before := all()

	// Every child carries the hash of what was applied to it.
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}, &corev1.Service{}} {
		name := "support"
		if _, ok := obj.(*corev1.ConfigMap); ok {
			name = "support-route"
		}
		if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		if obj.GetAnnotations()[appliedHashAnnotation] == "" {
			t.Errorf("%T %s lacks %s: %v", obj, name, appliedHashAnnotation, obj.GetAnnotations())
		}
	}

	counter := s.countingClient(t)
	r := &QueryRouteReconciler{Client: counter, APIReader: counter, Recorder: events.NewFakeRecorder(10), Clock: clock.RealClock{}, RouteImage: testRouteImage,
		ImagePullSecrets: []string{testPullSecret}}
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "support"}}
	for i := 1; i <= 2; i++ {
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatalf("reconcile %d: %v", i, err)
		}
		if writes := counter.take(); len(writes) != 0 {
			t.Errorf("reconcile %d of an unchanged route wrote: %v", i, writes)
		}
	}
	if after := all(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("resourceVersions changed:\nbefore %v\nafter  %v", before, after)
	}

	// A hand edit stays until the annotation goes: then the operator
	// applies its version again.
	ctx := context.Background()
	cm := &corev1.ConfigMap{}
	cmKey := client.ObjectKey{Namespace: ns, Name: "support-route"}
	if err := s.client.Get(ctx, cmKey, cm); err != nil {
		t.Fatal(err)
	}
	want := cm.Data
	edit := client.MergeFrom(cm.DeepCopy())
	cm.Data = map[string]string{"route.json": "{}"}
	if err := s.client.Patch(ctx, cm, edit); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := s.client.Get(ctx, cmKey, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["route.json"] != "{}" {
		t.Fatalf("a hand edit of the ConfigMap was reverted while its desired state did not change")
	}
	unannotate := client.MergeFrom(cm.DeepCopy())
	delete(cm.Annotations, appliedHashAnnotation)
	if err := s.client.Patch(ctx, cm, unannotate); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, "the ConfigMap applied again", func() error {
		if err := s.client.Get(ctx, cmKey, cm); err != nil {
			return err
		}
		if fmt.Sprint(cm.Data) != fmt.Sprint(want) || cm.Annotations[appliedHashAnnotation] == "" {
			return fmt.Errorf("data %v, annotations %v", cm.Data, cm.Annotations)
		}
		return nil
	})

	// A deleted child comes back: the other way to force a re-apply.
	svc := &corev1.Service{}
	if err := s.client.Get(context.Background(), req.NamespacedName, svc); err != nil {
		t.Fatal(err)
	}
	if err := s.client.Delete(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, "the deleted Service recreated", func() error {
		again := &corev1.Service{}
		if err := s.client.Get(context.Background(), req.NamespacedName, again); err != nil {
			return err
		}
		if again.UID == svc.UID {
			return fmt.Errorf("still the old Service")
		}
		return nil
	})
}

// TestUnchangedStoreIsNotWrittenAgain: a connected store probed again writes
// nothing; status.lastConnectedTime keeps when it became Connected.
func TestUnchangedStoreIsNotWrittenAgain(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	s.create(t, newSecret(ns, "embedder", "apiKey", "k", embedderHost), newStore(ns, "docs", s.milvusURI))
	store := s.waitStore(t, ns, "docs", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonConnected)
	connectedAt := store.Status.LastConnectedTime
	objs := func() map[string]client.Object { return map[string]client.Object{"docs": &v1alpha1.KnowledgeStore{}} }
	before := s.settled(t, ns, objs)

	time.Sleep(1100 * time.Millisecond) // a restamped lastConnectedTime would differ
	s.reconcileStoreWritesNothing(t, ns, "docs")
	if after := s.resourceVersions(t, ns, objs()); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("resourceVersion changed: before %v, after %v", before, after)
	}
	if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "docs"}, store); err != nil {
		t.Fatal(err)
	}
	if !store.Status.LastConnectedTime.Equal(connectedAt) {
		t.Errorf("lastConnectedTime moved from %v to %v on a recheck", connectedAt, store.Status.LastConnectedTime)
	}
}

// reconcileStoreWritesNothing reconciles an up-to-date store twice with a
// reconciler of its own and fails on any write.
func (s *suite) reconcileStoreWritesNothing(t *testing.T, ns, name string) {
	t.Helper()
	counter := s.countingClient(t)
	r := &KnowledgeStoreReconciler{Client: counter, APIReader: counter, Recorder: events.NewFakeRecorder(10), Clock: clock.RealClock{},
		Probe: knowledge.Probe, ProbeTimeout: 3 * time.Second, RecheckAfter: time.Minute, RetryAfter: time.Second,
		ReadIndex: knowledge.ReadIndexState, Image: testRouteImage, ImagePullSecrets: []string{testPullSecret}}
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
	for i := 1; i <= 2; i++ {
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatalf("reconcile %d: %v", i, err)
		}
		if writes := counter.take(); len(writes) != 0 {
			t.Errorf("reconcile %d of an unchanged store wrote: %v", i, writes)
		}
	}
}
