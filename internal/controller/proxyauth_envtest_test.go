package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// A trusted-proxy route admits only its proxy: a NetworkPolicy while it
// names peers, the shared secret in the pod's environment; a route that
// trusts any caller is not deployed unless the operator allows it.
func TestTrustedProxyRouteIsFenced(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	route := newRoute(ns, "support", "docs", "default")
	route.Spec.Auth = proxiedRoute().Spec.Auth
	s.create(t,
		newSecret(ns, "llm", "apiKey", "sk-llm-secret-value", llmHost),
		newSecret(ns, "embedder", "apiKey", "sk-embedder-secret-value", embedderHost),
		newSecret(ns, "support-proxy", "secret", "proxy-shared-secret"),
		newPrompt(ns, "default", "You are ACME's internal assistant."),
		newStore(ns, "docs", s.milvusURI),
		route,
	)
	s.waitCondition(t, ns, "support", v1alpha1.ConditionInsecureAuth, metav1.ConditionFalse, v1alpha1.ReasonCallerAuthenticated)

	policy := &networkingv1.NetworkPolicy{}
	eventually(t, 30*time.Second, "NetworkPolicy rendered", func() error {
		return s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support"}, policy)
	})
	if owner := metav1.GetControllerOf(policy); owner == nil || owner.Kind != "QueryRoute" || owner.Name != "support" {
		t.Errorf("NetworkPolicy controller %v", owner)
	}
	// The proxy and the route's evaluation runs (they send the proxy's
	// secret) on the API's port, the monitoring peers on the metrics port.
	if in := policy.Spec.Ingress; len(in) != 2 || len(in[0].From) != 2 || in[0].From[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "auth" ||
		in[0].From[1].NamespaceSelector != nil || in[0].From[1].PodSelector.MatchLabels[evalRouteLabel] != "support" ||
		in[0].Ports[0].Port.String() != "http" || len(in[1].From) != 1 || in[1].Ports[0].Port.String() != "metrics" {
		t.Errorf("NetworkPolicy ingress %+v", in)
	}
	env := s.deployment(t, ns, "support").Spec.Template.Spec.Containers[0].Env
	if !hasSecretEnv(env, "RAGROUTE_PROXY_SECRET", "support-proxy", "secret") {
		t.Errorf("the proxy secret does not reach the pod from its Secret: %+v", env)
	}

	// Trusting any caller is refused by an operator run without
	// --allow-insecure-proxy-auth (the suite's): the flag is named and the
	// running Deployment and its NetworkPolicy stay as they were.
	before := s.deployment(t, ns, "support").Spec.Template
	s.updateRoute(t, ns, "support", func(route *v1alpha1.QueryRoute) {
		route.Spec.Auth.TrustedProxy.SecretRef = nil
		route.Spec.Auth.TrustedProxy.InsecureAllowAnyCaller = true
	})
	route = s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInsecureProxyAuthNotAllowed)
	if d := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue ||
		d.Reason != v1alpha1.ReasonInsecureProxyAuthNotAllowed || !strings.Contains(d.Message, "--allow-insecure-proxy-auth") {
		t.Errorf("Degraded = %+v", d)
	}
	if stalled := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionStalled); stalled.Status != metav1.ConditionTrue {
		t.Errorf("Stalled = %+v", stalled)
	}
	if after := s.deployment(t, ns, "support").Spec.Template; !equality.Semantic.DeepEqual(before, after) {
		t.Errorf("the refused route changed its Deployment's pods")
	}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support"}, &networkingv1.NetworkPolicy{}); err != nil {
		t.Errorf("the refused route lost its NetworkPolicy: %v", err)
	}

	// A new route that trusts any caller gets no Deployment at all.
	fresh := newRoute(ns, "open", "docs", "default")
	fresh.Spec.Auth = v1alpha1.RouteAuth{TrustedProxy: &v1alpha1.TrustedProxyAuth{InsecureAllowAnyCaller: true,
		From: []v1alpha1.NetworkPeer{{PodSelector: &metav1.LabelSelector{}}}}}
	s.create(t, fresh)
	s.waitCondition(t, ns, "open", v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonInsecureProxyAuthNotAllowed)
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "open"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused route has a Deployment (err=%v)", err)
	}
}

// hasSecretEnv reports whether env takes name from the Secret key.
func hasSecretEnv(env []corev1.EnvVar, name, secret, key string) bool {
	for _, e := range env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
			e.ValueFrom.SecretKeyRef.Name == secret && e.ValueFrom.SecretKeyRef.Key == key {
			return true
		}
	}
	return false
}

// The operator reads only Secrets labelled for it: a reference to an
// unlabelled one names the missing label, and labeling it is enough.
func TestUnlabelledSecretIsNamedNotRead(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	llm := newSecret(ns, "llm", "apiKey", "sk-llm-secret-value", llmHost)
	llm.Labels = nil
	s.create(t,
		llm,
		newSecret(ns, "embedder", "apiKey", "sk-embedder-secret-value", embedderHost),
		newPrompt(ns, "default", "You are ACME's internal assistant."),
		newStore(ns, "docs", s.milvusURI),
		newRoute(ns, "support", "docs", "default"),
	)
	route := s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonSecretNotLabeled)
	if c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionReady); !strings.Contains(c.Message, `Secret "llm"`) ||
		!strings.Contains(c.Message, "ragroute.io/use=true") || strings.Contains(c.Message, "sk-llm") {
		t.Errorf("message %q", c.Message)
	}

	if err := s.client.Get(ctx, client.ObjectKeyFromObject(llm), llm); err != nil {
		t.Fatal(err)
	}
	llm.Labels = map[string]string{secretUseLabel: secretUseValue}
	if err := s.client.Update(ctx, llm); err != nil {
		t.Fatal(err)
	}
	s.deployment(t, ns, "support") // the labelled Secret is read: the route renders its children
}
