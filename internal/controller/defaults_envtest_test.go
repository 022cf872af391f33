package controller

import (
	"bytes"
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// TestSchemaDefaultsMatchGo: a section written as {} gets the CRD schema's
// defaults from the API server; a section left out gets the Go defaults
// at render time. Both must render the same config.
func TestSchemaDefaultsMatchGo(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()

	omitted := newRoute(ns, "omitted", "docs", "default")
	omitted.Spec.Model.MaxTokens = 0
	omitted.Spec.Replicas = nil
	empty := omitted.DeepCopy()
	empty.Name = "empty"
	empty.Spec.Retrieval = &v1alpha1.RetrievalSettings{}
	empty.Spec.Rerank = &v1alpha1.RerankSettings{}
	empty.Spec.Cache = &v1alpha1.CacheSettings{}
	empty.Spec.Turns = &v1alpha1.TurnSettings{}
	empty.Spec.Limits = &v1alpha1.RouteLimits{}
	empty.Spec.Timeouts = &v1alpha1.RouteTimeouts{}
	empty.Spec.Answer = &v1alpha1.AnswerSettings{Grounding: &v1alpha1.GroundingSettings{}}
	empty.Spec.UI = &v1alpha1.RouteUI{}
	empty.Spec.MCP = &v1alpha1.RouteMCP{}
	empty.Spec.Auth = v1alpha1.RouteAuth{TrustedProxy: &v1alpha1.TrustedProxyAuth{SecretRef: &v1alpha1.SecretKeyRef{Name: "proxy", Key: "secret"}}}
	omitted.Spec.Auth = empty.Spec.Auth
	jwt := omitted.DeepCopy()
	jwt.Name = "jwt"
	jwt.Spec.Auth = v1alpha1.RouteAuth{JWT: &v1alpha1.JWTAuth{Issuer: "https://sso.acme.example", Audience: "ragroute"}}
	store := newStore(ns, "docs", s.milvusURI)
	store.Spec.Embedding.MaxInputTokens = 0
	storeEmpty := store.DeepCopy()
	storeEmpty.Name = "docs-empty"
	storeEmpty.Spec.Search = &v1alpha1.SearchSettings{}
	s.create(t, omitted, empty, jwt, store, storeEmpty)

	get := func(obj client.Object) {
		t.Helper()
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, obj := range []client.Object{omitted, empty, jwt, store, storeEmpty} {
		get(obj)
	}
	if empty.Spec.Replicas == nil || empty.Spec.Model.SearchPolicy == "" || store.Spec.Embedding.MaxInputTokens == 0 {
		t.Fatalf("the API server applied no schema defaults: %+v", empty.Spec)
	}

	render := func(route *v1alpha1.QueryRoute, store *v1alpha1.KnowledgeStore) []byte {
		t.Helper()
		route = route.DeepCopy()
		route.Name = "same"
		store = store.DeepCopy()
		store.Name = "same"
		data, err := marshalRouteConfig(renderRouteConfig(routeInputs{route: route, store: store, promptName: "p"}))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if a, b := render(omitted, store), render(empty, storeEmpty); !bytes.Equal(a, b) {
		t.Errorf("omitted and {} sections render differently:\n%s\n---\n%s", a, b)
	}

	// Leaving jwt's optional fields out must give the schema's defaults.
	jwtWritten := jwt.DeepCopy()
	jwtWritten.Spec.Auth.JWT.UserClaim, jwtWritten.Spec.Auth.JWT.GroupsClaim = "", ""
	if a, b := render(jwt, store), render(jwtWritten, store); !bytes.Equal(a, b) {
		t.Errorf("JWT defaults differ between schema and Go:\n%s\n---\n%s", a, b)
	}
}
