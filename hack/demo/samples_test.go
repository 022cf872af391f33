package main

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object(kind string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetKind(kind)
	u.SetName(strings.ToLower(kind))
	return u
}

func TestLocaliseReplacesOnlyTheServiceEndpoints(t *testing.T) {
	d := &demo{milvusURI: "http://127.0.0.1:1", embedURL: "http://127.0.0.1:2/v1", chatURL: "http://127.0.0.1:3/v1",
		rerankURL: "http://127.0.0.1:4", cfg: config{chat: localChats[0]}}
	store := object("KnowledgeStore", map[string]any{
		"milvus":    map[string]any{"uri": "http://milvus.milvus.svc:19530", "collection": "acme_docs"},
		"embedding": map[string]any{"baseURL": "http://embedder.models.svc/v1", "model": "all-MiniLM-L6-v2"},
	})
	route := object("QueryRoute", map[string]any{
		"model":  map[string]any{"baseURL": "http://llm.models.svc/v1", "name": "qwen2.5-coder-1.5b-instruct"},
		"rerank": map[string]any{"mode": "crossEncoder", "crossEncoder": map[string]any{"baseURL": "http://reranker.models.svc", "model": "r"}},
		"auth":   map[string]any{"trustedProxy": map[string]any{"userHeader": "X-User", "groupsHeader": "X-Groups"}},
	})
	for _, obj := range []*unstructured.Unstructured{store, route} {
		if err := d.localise(obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		obj    *unstructured.Unstructured
		fields []string
		want   string
	}{
		{store, []string{"spec", "milvus", "uri"}, d.milvusURI},
		{store, []string{"spec", "milvus", "collection"}, "acme_docs"},
		{store, []string{"spec", "embedding", "baseURL"}, d.embedURL},
		{store, []string{"spec", "embedding", "model"}, "all-MiniLM-L6-v2"},
		{route, []string{"spec", "model", "baseURL"}, d.chatURL},
		{route, []string{"spec", "model", "name"}, "qwen2.5-coder-1.5b-instruct"},
		{route, []string{"spec", "rerank", "crossEncoder", "baseURL"}, d.rerankURL},
		{route, []string{"spec", "rerank", "crossEncoder", "model"}, "r"},
	} {
		if got, _, _ := unstructured.NestedString(c.obj.Object, c.fields...); got != c.want {
			t.Errorf("%s %v = %q, want %q", c.obj.GetKind(), c.fields, got, c.want)
		}
	}
	if d.applied.store != "knowledgestore" || d.applied.route != "queryroute" || d.applied.userHeader != "X-User" || d.applied.groupsHeader != "X-Groups" {
		t.Errorf("applied %+v", d.applied)
	}

	// DEMO_CHAT=smollm2 serves another model name.
	d.cfg.chat = localChats[2]
	if err := d.localise(route); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(route.Object, "spec", "model", "name"); got != "smollm2-135m-instruct" {
		t.Errorf("DEMO_CHAT=smollm2 not applied: %q", got)
	}
	d.cfg.chatModel = "qwen2.5:7b"
	if err := d.localise(route); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(route.Object, "spec", "model", "name"); got != "qwen2.5:7b" {
		t.Errorf("DEMO_CHAT_MODEL not applied: %q", got)
	}
	// A route without a cross-encoder does not get one.
	plain := object("QueryRoute", map[string]any{"auth": map[string]any{"trustedProxy": map[string]any{"userHeader": "X-User"}}})
	if err := d.localise(plain); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(plain.Object, "spec", "rerank"); found {
		t.Errorf("localise added a rerank section to a route without one: %v", plain.Object["spec"])
	}
	jwt := object("QueryRoute", map[string]any{"auth": map[string]any{"jwt": map[string]any{"issuer": "https://sso"}}})
	if err := d.localise(jwt); err == nil || !strings.Contains(err.Error(), "trustedProxy") {
		t.Errorf("a route the demo cannot ask as two users: %v", err)
	}
}

func TestLocalisePlaysTheProxyWithARandomSecret(t *testing.T) {
	d := &demo{}
	route := object("QueryRoute", map[string]any{
		"model": map[string]any{"baseURL": "http://llm.models.svc/v1", "name": "m"},
		"auth": map[string]any{"trustedProxy": map[string]any{"userHeader": "X-User", "groupsHeader": "X-Groups",
			"secretRef": map[string]any{"name": "support-proxy", "key": "secret"}}},
	})
	if err := d.localise(route); err != nil {
		t.Fatal(err)
	}
	first := d.applied.proxy
	if first.name != "support-proxy" || first.key != "secret" || first.header != "X-Ragroute-Proxy-Secret" || len(first.value) != 64 {
		t.Fatalf("proxy %+v", first)
	}
	if err := d.localise(route); err != nil {
		t.Fatal(err)
	}
	if d.applied.proxy.value == first.value {
		t.Error("the demo's proxy secret is not random")
	}
}

// Each DEMO_CHAT names a server hack/models.sh runs.
func TestLocalChatsAreServersOfModelsSh(t *testing.T) {
	script, err := os.ReadFile("../models.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range localChats {
		if !strings.Contains(string(script), "\n  "+c.server+")") && !strings.Contains(string(script), " "+c.server+" |") &&
			!strings.Contains(string(script), "| "+c.server+")") {
			t.Errorf("DEMO_CHAT=%s runs `hack/models.sh run %s`, which models.sh has no case for", c.name, c.server)
		}
	}
}
