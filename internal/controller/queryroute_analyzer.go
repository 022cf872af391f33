package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/lexical"
)

// analyzerMismatch is a store whose alias serves a generation whose
// keyword index another analyzer built than its spec names, the analyzer
// a route's pods prepare questions with: the pods search nothing (503
// analyzer_mismatch) until an ingestion with it swaps in a new generation.
// The pods compare the same IDs themselves (retrieval.GenerationWatch);
// this is the admin's view of it.
type analyzerMismatch struct {
	store        string
	generation   int64
	index, route string
	// indexed is the store's Indexed condition, which says whether the
	// ingestion that would end the mismatch runs or failed.
	indexed *metav1.Condition
}

// analyzerMismatchOf compares the analyzer of the store's serving
// generation with its spec's; nil when they match, or when the generation
// names none (built before ragroute analyzed text: unknown does not
// block).
func analyzerMismatchOf(store *v1alpha1.KnowledgeStore) *analyzerMismatch {
	if store == nil || store.Status.IndexAnalyzer == "" {
		return nil
	}
	route, err := specAnalyzer(store)
	if err != nil || route == store.Status.IndexAnalyzer {
		return nil // a spec the schema refuses is not rendered at all
	}
	m := &analyzerMismatch{store: store.Name, generation: store.Status.IndexGeneration, index: store.Status.IndexAnalyzer, route: route}
	for i, c := range store.Status.Conditions {
		if c.Type == v1alpha1.ConditionIndexed {
			m.indexed = &store.Status.Conditions[i]
		}
	}
	return m
}

// specAnalyzer is the ID of the analyzer the store's spec renders.
func specAnalyzer(store *v1alpha1.KnowledgeStore) (string, error) {
	a, err := lexical.New(renderLexical(store.Spec.Search).LanguageNames())
	if err != nil {
		return "", err
	}
	return a.ID(), nil
}

// condition is the route's Ready=False naming both analyzers.
func (m *analyzerMismatch) condition() metav1.Condition {
	msg := fmt.Sprintf("KnowledgeStore %q serves index generation %d, whose keyword index the analyzer %q built, but its "+
		"spec.search.lexical.languages, which this route's pods prepare questions with, give %q: the pods search nothing and answer "+
		"503 analyzer_mismatch until an ingestion with it swaps in a new generation", m.store, m.generation, m.index, m.route)
	if c := m.indexed; c != nil {
		msg += fmt.Sprintf(" (KnowledgeStore Indexed: %s: %s)", c.Reason, c.Message)
	}
	return condition(v1alpha1.ConditionReady, false, v1alpha1.ReasonAnalyzerMismatch, truncateMessage(msg))
}
