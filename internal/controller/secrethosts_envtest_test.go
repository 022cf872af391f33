package controller

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// A Secret goes only to the hosts its ragroute.io/allowed-hosts annotation
// lists: a route sending it there deploys; one sending it elsewhere, or a
// Secret without the annotation (another route's proxy secret), is refused
// with a reason naming the Secret, the field, the host and the annotation,
// and gets no Deployment. KnowledgeStores alike, git credentials included.
func TestSecretsGoOnlyToTheirAllowedHosts(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	s.routeWorld(t, ns)
	s.create(t, newSecret(ns, "support-proxy", "secret", "proxy-shared-secret"))
	s.deployment(t, ns, "support") // llm to vllm.models.svc: allowed

	elsewhere := newRoute(ns, "exfil", "docs", "default")
	elsewhere.Spec.Model.BaseURL = "https://attacker.example/v1"
	proxyAsKey := newRoute(ns, "proxykey", "docs", "default")
	proxyAsKey.Spec.Model.APIKeySecretRef = &v1alpha1.SecretKeyRef{Name: "support-proxy", Key: "secret"}
	s.create(t, elsewhere, proxyAsKey)

	for _, tc := range []struct {
		route string
		want  []string
	}{
		{"exfil", []string{`Secret "llm"`, "spec.model.apiKeySecretRef", "attacker.example:443", "spec.model.baseURL",
			`ragroute.io/allowed-hosts="` + llmHost + `" does not list that host`, `add "attacker.example"`}},
		{"proxykey", []string{`Secret "support-proxy"`, "spec.model.apiKeySecretRef", llmHost + ":80", "no annotation ragroute.io/allowed-hosts"}},
	} {
		route := s.waitCondition(t, ns, tc.route, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonSecretNotAllowedForHost)
		c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionReady)
		for _, want := range tc.want {
			if !strings.Contains(c.Message, want) {
				t.Errorf("%s: message %q lacks %q", tc.route, c.Message, want)
			}
		}
		if strings.Contains(c.Message, "proxy-shared-secret") || strings.Contains(c.Message, "sk-llm") {
			t.Errorf("%s: message shows a Secret's value: %q", tc.route, c.Message)
		}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.route}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: a route refused its Secret has a Deployment (err=%v)", tc.route, err)
		}
	}

	// A KnowledgeStore sending the chat key to its embedder is refused too.
	store := newStore(ns, "stolen", s.milvusURI)
	store.Spec.Embedding.APIKeySecretRef = &v1alpha1.SecretKeyRef{Name: "llm", Key: "apiKey"}
	// Git credentials go only to the repository's host.
	gitCreds := newSecret(ns, "git-creds", "password", "ghp-token", "git.acme.example")
	gitStore := newStore(ns, "handbook", s.milvusURI)
	gitStore.Spec.Ingestion = &v1alpha1.IngestionSettings{Sources: []v1alpha1.IngestionSource{{Name: "handbook",
		Git: &v1alpha1.GitSource{URL: "https://evil.example/acme/handbook.git", SecretRef: &v1alpha1.LocalObjectRef{Name: "git-creds"}}}}}
	s.create(t, store, gitCreds, gitStore)
	for name, want := range map[string]string{
		"stolen":   `Secret "llm" referenced by spec.embedding.apiKeySecretRef may not be sent to ` + embedderHost + ":80",
		"handbook": `Secret "git-creds" referenced by spec.ingestion.sources[handbook].git.secretRef may not be sent to evil.example:443`,
	} {
		got := s.waitStore(t, ns, name, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonSecretNotAllowedForHost)
		if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady); !strings.Contains(c.Message, want) {
			t.Errorf("store %s: message %q lacks %q", name, c.Message, want)
		}
	}

	// Allowing the host is enough: the route recovers by itself.
	llm := &corev1.Secret{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "llm"}, llm); err != nil {
		t.Fatal(err)
	}
	llm.Annotations[allowedHostsAnnotation] = llmHost + ", attacker.example:443"
	if err := s.client.Update(ctx, llm); err != nil {
		t.Fatal(err)
	}
	s.deployment(t, ns, "exfil")
}
