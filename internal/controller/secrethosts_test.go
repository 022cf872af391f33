package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// The allowed-hosts format: comma-separated host (any port) or host:port
// (that port; a URL without a port has its scheme's), hosts without case,
// no wildcards, no look-alikes.
func TestSecretAllowedHosts(t *testing.T) {
	for _, tc := range []struct {
		list, address string
		allowed       bool
	}{
		{"api.openai.com", "https://api.openai.com/v1", true},
		{"API.OpenAI.com.", "https://api.openai.com/v1", true},
		{"api.openai.com", "https://api.openai.com:8443/v1", true},
		{"api.openai.com:443", "https://api.openai.com/v1", true},
		{"api.openai.com:443", "http://api.openai.com/v1", false},
		{"embed.internal:8080, api.openai.com", "http://embed.internal:8080/v1", true},
		{"embed.internal:8080", "http://embed.internal:9090/v1", false},
		{"api.openai.com", "https://api.openai.com.evil.io/v1", false},
		{"openai.com", "https://api.openai.com/v1", false},
		{"*.openai.com", "https://api.openai.com/v1", false},
		{"redis.cache.svc:6379", "redis.cache.svc:6379", true},
		{"redis.cache.svc", "redis.cache.svc:6380", true},
		{"redis.cache.svc:6379", "other.svc:6379", false},
		{"milvus.db.svc", "tcp://milvus.db.svc", true},
		{"milvus.db.svc:19530", "tcp://milvus.db.svc", false},
		{"[fd00::1]:8080", "http://[fd00::1]:8080/v1", true},
		{"fd00::1", "http://[fd00::1]:9000/v1", true},
		{"git.acme.example", "ssh://git@git.acme.example/acme/docs.git", true},
		{"git.acme.example:22", "ssh://git@git.acme.example/acme/docs.git", true},
		{"", "https://api.openai.com/v1", false},
		{" , ", "https://api.openai.com/v1", false},
	} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "key",
			Annotations: map[string]string{allowedHostsAnnotation: tc.list}}}
		refusal := secretHostRefusal(secret, "spec.model.apiKeySecretRef", destination{"spec.model.baseURL", tc.address, hostPort})
		if (refusal == nil) != tc.allowed {
			t.Errorf("%q to %q: refusal %v, want allowed=%v", tc.list, tc.address, refusal, tc.allowed)
		}
		if refusal != nil && refusal.Reason != v1alpha1.ReasonSecretNotAllowedForHost {
			t.Errorf("%q to %q: reason %s", tc.list, tc.address, refusal.Reason)
		}
	}
	// Without the annotation nothing is sendable; an inbound-only use
	// (the proxy secret) needs none.
	bare := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "proxy"}}
	if secretHostRefusal(bare, "spec.model.apiKeySecretRef", destination{"spec.model.baseURL", "http://llm/v1", hostPort}) == nil {
		t.Error("a Secret without the annotation was sendable")
	}
	if r := secretHostRefusal(bare, "spec.auth.trustedProxy.secretRef", destination{}); r != nil {
		t.Errorf("an inbound use was refused: %v", r)
	}
}

// A store's Milvus token is checked against the port the Milvus client
// dials, not the one an HTTP client would: "http://host" is no port 80
// to it (it dials none, or 443 through a proxy), so an allowed host that
// names port 80 does not admit it, and "https://host" is 443.
func TestMilvusTokenIsCheckedAgainstThePortTheClientDials(t *testing.T) {
	for _, tc := range []struct {
		list, uri string
		allowed   bool
		problem   string
	}{
		{"milvus.db.svc:80", "http://milvus.db.svc", false, "without a port"},
		{"milvus.db.svc", "http://milvus.db.svc", false, "without a port"},
		{"milvus.db.svc:19530", "tcp://milvus.db.svc", false, "without a port"},
		{"milvus.db.svc:19530", "http://milvus.db.svc:19530", true, ""},
		{"milvus.db.svc:19530", "tcp://milvus.db.svc:19530", true, ""},
		{"milvus.example:443", "https://milvus.example", true, ""},
		{"milvus.example:19530", "https://milvus.example", false, "does not list"},
		{"milvus.example:80", "https://milvus.example", false, "does not list"},
	} {
		store := &v1alpha1.KnowledgeStoreSpec{Milvus: v1alpha1.MilvusConnection{URI: tc.uri,
			TokenSecretRef: &v1alpha1.SecretKeyRef{Name: "milvus", Key: "token"}}}
		use := storeSecretKeys(store)[0]
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "milvus",
			Annotations: map[string]string{allowedHostsAnnotation: tc.list}}}
		refusal := secretHostRefusal(secret, use.field, use.to)
		if (refusal == nil) != tc.allowed {
			t.Errorf("%q to %q: refusal %v, want allowed=%v", tc.list, tc.uri, refusal, tc.allowed)
		}
		if refusal != nil && !strings.Contains(refusal.Message, tc.problem) {
			t.Errorf("%q to %q: %q does not say %q", tc.list, tc.uri, refusal.Message, tc.problem)
		}
	}
}

// The judge's key is checked as spec.model's is: against the judge's own
// host, carried in its own variable, so a Secret listed for the chat
// model cannot be sent to another host by naming it as the judge's.
func TestTheJudgesKeyGoesOnlyToTheJudgesHost(t *testing.T) {
	route := newRoute("ns", "support", "docs", "default")
	route.Spec.Answer = &v1alpha1.AnswerSettings{Judge: &v1alpha1.JudgeModel{BaseURL: "https://judge.example/v1", Name: "big",
		APIKeySecretRef: &v1alpha1.SecretKeyRef{Name: "llm", Key: "apiKey"}}}
	var judge *secretUse
	for _, use := range routeSecretKeys(&route.Spec) {
		if use.field == "spec.answer.judge.apiKeySecretRef" {
			judge = &use
		}
	}
	if judge == nil || judge.env != podconfig.EnvJudgeAPIKey || judge.to.field != "spec.answer.judge.baseURL" {
		t.Fatalf("the judge's key use %+v", judge)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "llm", Annotations: map[string]string{allowedHostsAnnotation: "llm.models.svc"}}}
	refusal := secretHostRefusal(secret, judge.field, judge.to)
	if refusal == nil || !strings.Contains(refusal.Message, "spec.answer.judge.baseURL") || !strings.Contains(refusal.Message, "judge.example:443") {
		t.Errorf("refusal %v, want the judge's host named", refusal)
	}
}
