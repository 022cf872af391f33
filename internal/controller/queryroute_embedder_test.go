package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// storeServing is a store whose spec names e5-small and whose alias serves
// a generation of fingerprint served, built by index.
func storeServing(served string, index *v1alpha1.IndexEmbedder) *v1alpha1.KnowledgeStore {
	store := &v1alpha1.KnowledgeStore{ObjectMeta: metav1.ObjectMeta{Name: "docs", Generation: 2}}
	store.Spec.Embedding = v1alpha1.EmbeddingModel{BaseURL: "http://embed:8080/v1", Model: "e5-small", Dimensions: 384,
		QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	store.Status = v1alpha1.KnowledgeStoreStatus{IndexGeneration: 3, EmbedderFingerprint: served, IndexEmbedder: index,
		Conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonSchemaReady},
			{Type: v1alpha1.ConditionIndexed, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonIngestionFailed,
				Message: "embed 20 chunks: 500; generation 3 keeps serving"}}}
	return store
}

// A route whose store serves a generation of another embedder is not
// Ready, with reason EmbedderMismatch and a message that names both
// embedders and why the ingestion has not ended it; the same route over a
// generation of its own embedder (at whatever endpoint), or of one that
// names no embedder, is Ready.
func TestRouteReadyNamesAnEmbedderMismatch(t *testing.T) {
	e5 := &v1alpha1.IndexEmbedder{Model: "e5-small", Dimensions: 384, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	serving := &rolloutState{observedCurrent: true, updated: 2, ready: 2, available: 2}
	for _, tc := range []struct {
		name  string
		store *v1alpha1.KnowledgeStore
		want  wantCondition
		names []string
	}{
		{"another model", storeServing("0123456789abcdef", &v1alpha1.IndexEmbedder{Model: "all-MiniLM-L6-v2", Dimensions: 384}),
			wantCondition{"False", v1alpha1.ReasonEmbedderMismatch},
			[]string{`"all-MiniLM-L6-v2" (384 dimensions, no input prefixes)`, `"e5-small" (384 dimensions, query prefix "query: "`,
				`KnowledgeStore "docs"`, "generation 3", "503 embedder_mismatch", "IngestionFailed: embed 20 chunks"}},
		{"other prefixes", storeServing("0123456789abcdef", &v1alpha1.IndexEmbedder{Model: "e5-small", Dimensions: 384}),
			wantCondition{"False", v1alpha1.ReasonEmbedderMismatch}, []string{`"e5-small" (384 dimensions, no input prefixes)`}},
		{"the route's embedder", storeServing(renderEmbedding(&storeServing("", nil).Spec).Fingerprint(), e5),
			wantCondition{"True", v1alpha1.ReasonAvailable}, nil},
		{"the route's embedder, ingested through another endpoint", storeServing("0123456789abcdef", e5),
			wantCondition{"True", v1alpha1.ReasonAvailable}, nil},
		{"no embedder recorded: unknown does not block", storeServing("0123456789abcdef", nil),
			wantCondition{"True", v1alpha1.ReasonAvailable}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready := routeReadyCondition(routeFacts{desired: 2, rollout: serving, embedder: embedderMismatchOf(tc.store)})
			if ready.Status != tc.want.status || ready.Reason != tc.want.reason {
				t.Fatalf("Ready = %s/%s (%s), want %s/%s", ready.Status, ready.Reason, ready.Message, tc.want.status, tc.want.reason)
			}
			for _, name := range tc.names {
				if !strings.Contains(ready.Message, name) {
					t.Errorf("message %q does not name %s", ready.Message, name)
				}
			}
		})
	}
}

// The store's status shows which embedder built the serving generation,
// and a route hears when it changes (the end of its mismatch).
func TestStoreStatusNamesTheServingEmbedder(t *testing.T) {
	status := &v1alpha1.KnowledgeStoreStatus{}
	info := &knowledge.EmbedderInfo{Model: "e5-small", Dimensions: 384, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	recordIngestion(status, storeFacts{index: &knowledge.IndexState{Exists: true, Rows: 4,
		Generation: knowledge.Generation{Number: 4, Embedder: "fp-e5", EmbedderInfo: info}}})
	want := v1alpha1.IndexEmbedder{Model: "e5-small", Dimensions: 384, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	if status.EmbedderFingerprint != "fp-e5" || status.IndexEmbedder == nil || *status.IndexEmbedder != want {
		t.Errorf("status %s %+v, want fp-e5 named %+v", status.EmbedderFingerprint, status.IndexEmbedder, want)
	}

	before := storeServing("fp-minilm", &v1alpha1.IndexEmbedder{Model: "all-MiniLM-L6-v2", Dimensions: 384})
	after := storeServing("fp-e5", &want)
	if !referencedFactsChanged.Update(event.UpdateEvent{ObjectOld: before, ObjectNew: after}) {
		t.Error("a new serving embedder does not reconcile the store's routes")
	}
}
