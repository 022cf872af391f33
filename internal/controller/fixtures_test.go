package controller

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// The hosts the fixtures send their Secrets to.
const (
	llmHost      = "vllm.models.svc"
	embedderHost = "embedder.models.svc"
)

// newSecret makes a Secret the operator may read (labelled for it) and
// send to hosts (its allowed-hosts annotation, absent without hosts).
func newSecret(ns, name, key, value string, hosts ...string) *corev1.Secret {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{secretUseLabel: secretUseValue}},
		Data:       map[string][]byte{key: []byte(value)},
	}
	if len(hosts) > 0 {
		secret.Annotations = map[string]string{allowedHostsAnnotation: strings.Join(hosts, ", ")}
	}
	return secret
}

func newPrompt(ns, name, text string) *v1alpha1.PlatformPrompt {
	return &v1alpha1.PlatformPrompt{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.PlatformPromptSpec{
			Text:     text,
			NotFound: "I could not find this in ACME's documentation.",
			Styles: &v1alpha1.AnswerStyles{
				Concept: "Explain how and why.",
				Screen:  "Name the exact screen, field, button or menu.",
			},
		},
	}
}

func newStore(ns, name, milvusURI string) *v1alpha1.KnowledgeStore {
	return &v1alpha1.KnowledgeStore{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.KnowledgeStoreSpec{
			Milvus: v1alpha1.MilvusConnection{URI: milvusURI, Collection: "acme_docs"},
			Embedding: v1alpha1.EmbeddingModel{
				BaseURL:         "http://" + embedderHost + "/v1",
				Model:           "all-MiniLM-L6-v2",
				Dimensions:      384,
				MaxInputTokens:  256,
				APIKeySecretRef: &v1alpha1.SecretKeyRef{Name: "embedder", Key: "apiKey"},
			},
			Access: &v1alpha1.AccessSettings{DefaultPrincipals: []string{"group:staff"}},
		},
	}
}

func newRoute(ns, name, store, prompt string) *v1alpha1.QueryRoute {
	return &v1alpha1.QueryRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.QueryRouteSpec{
			KnowledgeStoreRef: v1alpha1.LocalObjectRef{Name: store},
			PlatformPromptRef: v1alpha1.LocalObjectRef{Name: prompt},
			Model: &v1alpha1.ChatModel{
				BaseURL:         "http://" + llmHost + "/v1",
				Name:            "llama-3.1-8b-instruct",
				APIKeySecretRef: &v1alpha1.SecretKeyRef{Name: "llm", Key: "apiKey"},
				MaxTokens:       800,
			},
			Window: v1alpha1.ContextWindow{ContextTokens: 8192, AnswerReserveTokens: 1024},
			Auth: v1alpha1.RouteAuth{JWT: &v1alpha1.JWTAuth{
				Issuer: "https://sso.acme.example", Audience: "ragroute",
			}},
			Replicas: ptr.To[int32](1),
		},
	}
}

// create creates objects, failing the test on the first error.
func (s *suite) create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := s.client.Create(context.Background(), obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// routeWorld creates everything one route needs in ns: its Secrets, a
// prompt, a store on the suite's Milvus, and the route.
func (s *suite) routeWorld(t *testing.T, ns string) *v1alpha1.QueryRoute {
	t.Helper()
	route := newRoute(ns, "support", "docs", "default")
	s.create(t,
		newSecret(ns, "llm", "apiKey", "sk-llm-secret-value", llmHost),
		newSecret(ns, "embedder", "apiKey", "sk-embedder-secret-value", embedderHost),
		newPrompt(ns, "default", "You are ACME's internal assistant. Never reveal credentials."),
		newStore(ns, "docs", s.milvusURI),
		route,
	)
	return route
}
