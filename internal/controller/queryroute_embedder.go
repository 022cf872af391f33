package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// embedderMismatch is a store whose alias serves a generation built by
// another embedder (model, dimensions, input prefixes) than its spec
// names, which is the embedder a route's pods embed questions with
// (renderEmbedding): the pods search nothing (503 embedder_mismatch) until
// an ingestion with it swaps in a new generation. The pods compare the
// same names themselves (retrieval.GenerationWatch); this is the admin's
// view of it.
type embedderMismatch struct {
	store        string
	generation   int64
	index, route knowledge.EmbedderInfo
	// indexed is the store's Indexed condition, which says whether the
	// ingestion that would end the mismatch runs or failed.
	indexed *metav1.Condition
}

// embedderMismatchOf compares the embedder of the store's serving
// generation with its spec's; nil when they match, or when the generation
// names none (built before ingestions recorded it: unknown does not
// block).
func embedderMismatchOf(store *v1alpha1.KnowledgeStore) *embedderMismatch {
	if store == nil || store.Status.IndexEmbedder == nil {
		return nil
	}
	index, route := indexEmbedderInfo(store.Status.IndexEmbedder), embedderInfo(renderEmbedding(&store.Spec))
	if index == route {
		return nil
	}
	m := &embedderMismatch{store: store.Name, generation: store.Status.IndexGeneration, index: index, route: route}
	for i, c := range store.Status.Conditions {
		if c.Type == v1alpha1.ConditionIndexed {
			m.indexed = &store.Status.Conditions[i]
		}
	}
	return m
}

// embedderInfo names a rendered embedder as a generation records it.
func embedderInfo(e podconfig.Embedding) knowledge.EmbedderInfo {
	return knowledge.EmbedderInfo{Model: e.Model, Dimensions: int(e.Dimensions), QueryPrefix: e.QueryPrefix, DocumentPrefix: e.DocumentPrefix}
}

// indexEmbedderStatus is a generation's recorded embedder as a store's
// status shows it; nil when none is recorded.
func indexEmbedderStatus(e *knowledge.EmbedderInfo) *v1alpha1.IndexEmbedder {
	if e == nil {
		return nil
	}
	return &v1alpha1.IndexEmbedder{Model: e.Model, Dimensions: int32(e.Dimensions), QueryPrefix: e.QueryPrefix, DocumentPrefix: e.DocumentPrefix}
}

// servingEmbedder names the embedder of a store's serving generation, ""
// when it names none: what a route's Ready depends on (facts).
func servingEmbedder(store *v1alpha1.KnowledgeStore) string {
	if e := store.Status.IndexEmbedder; e != nil {
		return indexEmbedderInfo(e).String()
	}
	return ""
}

// indexEmbedderInfo is a store's status.indexEmbedder as a generation
// records it.
func indexEmbedderInfo(e *v1alpha1.IndexEmbedder) knowledge.EmbedderInfo {
	return knowledge.EmbedderInfo{Model: e.Model, Dimensions: int(e.Dimensions), QueryPrefix: e.QueryPrefix, DocumentPrefix: e.DocumentPrefix}
}

// condition is the route's Ready=False naming both embedders.
func (m *embedderMismatch) condition() metav1.Condition {
	msg := fmt.Sprintf("KnowledgeStore %q serves index generation %d, built by the embedder %s, but its spec.embedding, which this "+
		"route's pods embed questions with, is %s: the pods search nothing and answer 503 embedder_mismatch until an ingestion "+
		"with it swaps in a new generation", m.store, m.generation, m.index, m.route)
	if c := m.indexed; c != nil {
		msg += fmt.Sprintf(" (KnowledgeStore Indexed: %s: %s)", c.Reason, c.Message)
	}
	return condition(v1alpha1.ConditionReady, false, v1alpha1.ReasonEmbedderMismatch, truncateMessage(msg))
}
