package controller

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// TestRelativeFloorsAndPrefixesReachTheRouteConfig: a store's input
// prefixes and a route's floors relative to the background, written
// through the API server, reach the rendered route config; the raw floors
// stay beside them as the floors in force until a background is recorded.
func TestRelativeFloorsAndPrefixesReachTheRouteConfig(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	store := newStore(ns, "docs", s.milvusURI)
	store.Spec.Embedding.Model = "multilingual-e5-small"
	store.Spec.Embedding.QueryPrefix, store.Spec.Embedding.DocumentPrefix = "query: ", "passage: "
	route := newRoute(ns, "support", "docs", "default")
	route.Spec.Retrieval = &v1alpha1.RetrievalSettings{SimilarityFloorSigmas: ptr.To(3.0), StrictFloorSigmas: ptr.To(5.0)}
	s.create(t,
		newSecret(ns, "llm", "apiKey", "k", llmHost), newSecret(ns, "embedder", "apiKey", "k", embedderHost),
		newPrompt(ns, "default", "You are ACME's internal assistant."), store, route)

	var cfg podconfig.RouteConfig
	eventually(t, waitFor, "the route config", func() error {
		cm := &corev1.ConfigMap{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support-route"}, cm); err != nil {
			return err
		}
		var err error
		cfg, err = podconfig.ParseRoute(strings.NewReader(cm.Data[podconfig.RouteFileName]))
		return err
	})
	r, e := cfg.Retrieval, cfg.Store.Embedding
	if r.SimilarityFloorSigmas == nil || *r.SimilarityFloorSigmas != 3 || r.StrictFloorSigmas == nil || *r.StrictFloorSigmas != 5 ||
		r.SimilarityFloor != v1alpha1.DefaultSimilarityFloor || r.StrictFloor != v1alpha1.DefaultStrictFloor {
		t.Errorf("retrieval rendered as %+v", r)
	}
	if e.QueryPrefix != "query: " || e.DocumentPrefix != "passage: " {
		t.Errorf("embedding rendered as %+v", e)
	}
}
