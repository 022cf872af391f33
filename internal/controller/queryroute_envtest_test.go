package controller

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

const waitFor = 20 * time.Second

// getRoute fetches a route by name.
func (s *suite) getRoute(t *testing.T, ns, name string) *v1alpha1.QueryRoute {
	t.Helper()
	route := &v1alpha1.QueryRoute{}
	if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, route); err != nil {
		t.Fatalf("get route %s: %v", name, err)
	}
	return route
}

// updateRoute changes a route's spec, again when the operator's status
// write got in between the read and the update (a conflict).
func (s *suite) updateRoute(t *testing.T, ns, name string, change func(*v1alpha1.QueryRoute)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		route := s.getRoute(t, ns, name)
		change(route)
		return s.client.Update(context.Background(), route)
	})
	if err != nil {
		t.Fatalf("update route %s: %v", name, err)
	}
}

// waitCondition waits until the route's condition has status and reason.
func (s *suite) waitCondition(t *testing.T, ns, name, condType string, status metav1.ConditionStatus, reason string) *v1alpha1.QueryRoute {
	t.Helper()
	var route *v1alpha1.QueryRoute
	eventually(t, waitFor, fmt.Sprintf("route %s %s=%s/%s", name, condType, status, reason), func() error {
		route = s.getRoute(t, ns, name)
		c := meta.FindStatusCondition(route.Status.Conditions, condType)
		if c == nil || c.Status != status || c.Reason != reason || c.ObservedGeneration != route.Generation {
			return fmt.Errorf("conditions %+v", route.Status.Conditions)
		}
		return nil
	})
	return route
}

// deploymentHash waits for the route's Deployment and returns its config hash.
func (s *suite) deployment(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	eventually(t, waitFor, "deployment "+name, func() error {
		return s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)
	})
	return d
}

// markRolledOut plays the Deployment controller (envtest has no nodes):
// every replica of the current template is ready.
func (s *suite) markRolledOut(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	patch := client.MergeFrom(d.DeepCopy())
	n := *d.Spec.Replicas
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	if err := s.client.Status().Patch(context.Background(), d, patch); err != nil {
		t.Fatalf("patch deployment status: %v", err)
	}
}

func TestRouteHappyPath(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	s.routeWorld(t, ns)
	ctx := context.Background()

	route := s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonNoReadyReplicas)
	if c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionDegraded); c.Status != metav1.ConditionFalse {
		t.Errorf("Degraded = %+v, want False", c)
	}
	if c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionProgressing); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonRollingOut {
		t.Errorf("Progressing = %+v, want True/RollingOut", c)
	}
	if want := "http://support." + ns + ".svc:8080"; route.Status.Endpoint != want {
		t.Errorf("endpoint = %q, want %q", route.Status.Endpoint, want)
	}

	// The rendered config, as `ragroute serve` will read it.
	cm := &corev1.ConfigMap{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support-route"}, cm); err != nil {
		t.Fatalf("get ConfigMap: %v", err)
	}
	rendered := cm.Data[podconfig.RouteFileName]
	if _, err := podconfig.ParseRoute(strings.NewReader(rendered)); err != nil {
		t.Fatalf("rendered config does not parse: %v", err)
	}
	normalised := strings.NewReplacer(ns, "NAMESPACE", s.milvusURI, "MILVUS_URI").Replace(rendered)
	compareGolden(t, "envtest-route-config.golden.json", []byte(normalised))

	// The Deployment runs that config, with secrets only as secret refs.
	d := s.deployment(t, ns, "support")
	if got := d.Spec.Template.Annotations[configHashAnnotation]; got == "" || got != route.Status.ConfigHash {
		t.Errorf("pod template hash %q, status.configHash %q: want equal and set", got, route.Status.ConfigHash)
	}
	container := d.Spec.Template.Spec.Containers[0]
	if container.Image != testRouteImage || strings.Join(container.Args, " ") != "serve --config=/etc/ragroute/route.json" {
		t.Errorf("container runs %s %v", container.Image, container.Args)
	}
	wantEnv := map[string]string{podconfig.EnvModelAPIKey: "llm/apiKey", podconfig.EnvEmbeddingAPIKey: "embedder/apiKey"}
	for _, env := range container.Env {
		if env.Name == podconfig.EnvConfigHash {
			// The pod's own name for its config: the template's annotation.
			if field := env.ValueFrom.FieldRef; field == nil || field.FieldPath != "metadata.annotations['"+configHashAnnotation+"']" {
				t.Errorf("env %s = %+v", env.Name, env)
			}
			continue
		}
		ref := env.ValueFrom.SecretKeyRef
		if env.Value != "" || ref == nil || wantEnv[env.Name] != ref.Name+"/"+ref.Key {
			t.Errorf("env %s = %+v", env.Name, env)
		}
		delete(wantEnv, env.Name)
	}
	if len(wantEnv) > 0 {
		t.Errorf("missing env: %v", wantEnv)
	}
	for _, obj := range []client.Object{cm, d} {
		if !metav1.IsControlledBy(obj, route) {
			t.Errorf("%T is not controlled by the route: %+v", obj, obj.GetOwnerReferences())
		}
	}
	svc := &corev1.Service{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support"}, svc); err != nil {
		t.Fatalf("get Service: %v", err)
	}
	if p := svc.Spec.Ports[0]; p.Port != 8080 || svc.Spec.Selector["app.kubernetes.io/instance"] != "support" {
		t.Errorf("service ports %+v selector %v", svc.Spec.Ports, svc.Spec.Selector)
	}

	// Once the pods are ready the route is.
	s.markRolledOut(t, d)
	route = s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	if c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionProgressing); c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRolledOut {
		t.Errorf("Progressing = %+v, want False/RolledOut", c)
	}
	if route.Status.ReadyReplicas != 1 {
		t.Errorf("readyReplicas = %d, want 1", route.Status.ReadyReplicas)
	}
}

func TestPromptChangeRollsOnlyRoutesUsingIt(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	s.routeWorld(t, ns) // route "support" on prompt "default"
	s.create(t, newPrompt(ns, "other", "You are ACME's HR assistant."), newRoute(ns, "hr", "docs", "other"))

	support := s.waitCondition(t, ns, "support", v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonReferencesResolved)
	hr := s.waitCondition(t, ns, "hr", v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonReferencesResolved)
	hrDeployment := s.deployment(t, ns, "hr")

	prompt := &v1alpha1.PlatformPrompt{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, prompt); err != nil {
		t.Fatal(err)
	}
	prompt.Spec.Text = "You are ACME's internal assistant. Never reveal credentials or personal data."
	if err := s.client.Update(ctx, prompt); err != nil {
		t.Fatal(err)
	}

	eventually(t, waitFor, "support rolls to the new prompt", func() error {
		d := s.deployment(t, ns, "support")
		if d.Spec.Template.Annotations[configHashAnnotation] == support.Status.ConfigHash {
			return errors.New("pod template still has the old config hash")
		}
		cm := &corev1.ConfigMap{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support-route"}, cm); err != nil {
			return err
		}
		if !strings.Contains(cm.Data[podconfig.RouteFileName], "or personal data") {
			return errors.New("config does not hold the new prompt")
		}
		return nil
	})
	// Give a wrongly wired watch time to touch hr, then check it did not.
	time.Sleep(time.Second)
	after := s.deployment(t, ns, "hr")
	if after.Spec.Template.Annotations[configHashAnnotation] != hr.Status.ConfigHash || after.Generation != hrDeployment.Generation {
		t.Errorf("hr rolled although its prompt did not change")
	}
}

func TestDeletedStoreMakesRouteNotReadyUntilRecreated(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	s.routeWorld(t, ns)
	s.waitCondition(t, ns, "support", v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonReferencesResolved)

	if err := s.client.Delete(ctx, &v1alpha1.KnowledgeStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "docs"}}); err != nil {
		t.Fatal(err)
	}
	route := s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonKnowledgeStoreMissing)
	c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionReady)
	if !strings.Contains(c.Message, `KnowledgeStore "docs"`) {
		t.Errorf("Ready message does not name the store: %q", c.Message)
	}
	if d := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != v1alpha1.ReasonKnowledgeStoreMissing {
		t.Errorf("Degraded = %+v", d)
	}

	s.create(t, newStore(ns, "docs", s.milvusURI))
	s.waitCondition(t, ns, "support", v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonReferencesResolved)
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonNoReadyReplicas)
}

func TestSecretsStayOutOfConfigMapsAndRotationRolls(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	s.routeWorld(t, ns)
	route := s.waitCondition(t, ns, "support", v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonReferencesResolved)

	secretValues := []string{"sk-llm-secret-value", "sk-embedder-secret-value"}
	assertNoSecretInConfigMaps := func() {
		t.Helper()
		cms := &corev1.ConfigMapList{}
		if err := s.client.List(ctx, cms, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, cm := range cms.Items {
			for key, value := range cm.Data {
				for _, secret := range secretValues {
					if strings.Contains(value, secret) {
						t.Errorf("ConfigMap %s key %s holds a secret value", cm.Name, key)
					}
				}
			}
		}
	}
	assertNoSecretInConfigMaps()

	// Rotating the embedder key (a Secret the route reads through its
	// store) rolls the pods, and still copies nothing.
	secret := &corev1.Secret{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "embedder"}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["apiKey"] = []byte("sk-embedder-rotated-value")
	secretValues = append(secretValues, "sk-embedder-rotated-value")
	if err := s.client.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, "rotation rolls the pods", func() error {
		if d := s.deployment(t, ns, "support"); d.Spec.Template.Annotations[configHashAnnotation] == route.Status.ConfigHash {
			return errors.New("config hash unchanged")
		}
		return nil
	})
	assertNoSecretInConfigMaps()

	// A missing key is named.
	if err := s.client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llm"}}); err != nil {
		t.Fatal(err)
	}
	route = s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
	if c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionReady); !strings.Contains(c.Message, `Secret "llm" referenced by spec.model.apiKeySecretRef`) {
		t.Errorf("message %q does not name the secret and field", c.Message)
	}
}

func TestDeletingRouteCollectsChildren(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	route := s.routeWorld(t, ns)
	s.deployment(t, ns, "support")

	if err := s.client.Delete(ctx, route, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	children := map[string]client.Object{
		"Deployment": &appsv1.Deployment{}, "Service": &corev1.Service{}, "ConfigMap": &corev1.ConfigMap{},
	}
	names := map[string]string{"Deployment": "support", "Service": "support", "ConfigMap": "support-route"}
	for kind, obj := range children {
		eventually(t, 30*time.Second, kind+" garbage-collected", func() error {
			err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names[kind]}, obj)
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (err=%v)", err)
		})
	}
}

func TestRouteRefusesToAdoptForeignObjects(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	foreign := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "support"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	s.create(t, foreign)
	s.routeWorld(t, ns)
	route := s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonChildConflict)
	if c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionReady); !strings.Contains(c.Message, `"support" exists and is not owned`) {
		t.Errorf("message %q", c.Message)
	}
}

// compareGolden compares got with testdata/name, rewriting it with -update.
func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from golden (run `go test ./internal/controller -run %s -update` if intended):\n--- got\n%s\n--- want\n%s", name, t.Name(), got, want)
	}
}

// A route whose store serves a generation of another embedder than the
// store's spec (the route's pods' embedder) is Ready=False,
// EmbedderMismatch, naming both, though its pods are rolled out; once the
// serving generation is the spec's embedder's, the route is Ready again,
// by the store's status update alone.
func TestRouteOverAnIndexOfAnotherEmbedderIsNotReady(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	s.routeWorld(t, ns)
	s.markRolledOut(t, s.deployment(t, ns, "support"))
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)

	serve := func(fingerprint string, named *v1alpha1.IndexEmbedder) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			store := &v1alpha1.KnowledgeStore{}
			if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "docs"}, store); err != nil {
				return err
			}
			store.Status.IndexGeneration, store.Status.EmbedderFingerprint, store.Status.IndexEmbedder = 3, fingerprint, named
			return s.client.Status().Update(ctx, store)
		})
		if err != nil {
			t.Fatalf("update store status: %v", err)
		}
	}
	serve("0123456789abcdef", &v1alpha1.IndexEmbedder{Model: "bge-small-en-v1.5", Dimensions: 384})
	route := s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonEmbedderMismatch)
	c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionReady)
	for _, name := range []string{`"bge-small-en-v1.5" (384 dimensions`, `"all-MiniLM-L6-v2" (384 dimensions`, `KnowledgeStore "docs"`} {
		if !strings.Contains(c.Message, name) {
			t.Errorf("Ready message %q does not name %s", c.Message, name)
		}
	}

	store := &v1alpha1.KnowledgeStore{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "docs"}, store); err != nil {
		t.Fatal(err)
	}
	serve(renderEmbedding(&store.Spec).Fingerprint(), &v1alpha1.IndexEmbedder{Model: "all-MiniLM-L6-v2", Dimensions: 384})
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)
}

// A route says whether its store's serving generation holds the units'
// vectors its grounding check reads, and hears each change by the store's
// status alone; Ready stays True throughout: the check works either way.
func TestRouteSaysWhetherItsStoreHoldsGroundingUnits(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	s.routeWorld(t, ns)
	s.markRolledOut(t, s.deployment(t, ns, "support"))
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	// A store without sources: the operator reads no generation of it.
	s.waitCondition(t, ns, "support", v1alpha1.ConditionGroundingUnits, metav1.ConditionUnknown, v1alpha1.ReasonNoIndex)

	serve := func(generation int64, units string) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			store := &v1alpha1.KnowledgeStore{}
			if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "docs"}, store); err != nil {
				return err
			}
			store.Status.IndexGeneration, store.Status.IndexGroundingUnits = generation, units
			return s.client.Status().Update(ctx, store)
		})
		if err != nil {
			t.Fatalf("update store status: %v", err)
		}
	}
	for _, step := range []struct {
		generation int64
		units      string
		want       metav1.ConditionStatus
		reason     string
	}{
		{3, "", metav1.ConditionFalse, v1alpha1.ReasonUnitsEmbeddedPerTurn},
		{4, knowledge.UnitsVersion, metav1.ConditionTrue, v1alpha1.ReasonUnitsStored},
	} {
		serve(step.generation, step.units)
		route := s.waitCondition(t, ns, "support", v1alpha1.ConditionGroundingUnits, step.want, step.reason)
		if c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionGroundingUnits); !strings.Contains(c.Message,
			fmt.Sprintf(`KnowledgeStore "docs" serves generation %d`, step.generation)) {
			t.Errorf("GroundingUnits message %q", c.Message)
		}
		if !isReady(route.Status.Conditions) {
			t.Errorf("generation %d: Ready %+v", step.generation, meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionReady))
		}
	}
}
