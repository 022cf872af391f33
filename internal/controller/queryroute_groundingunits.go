package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// groundingUnits is what the store's status says of the units' vectors
// (sentences, list items, code blocks of each chunk) a route's grounding
// check holds the answer's sentences against. Stored ones spare the check
// embedding each new fragment's units at query time; without them the
// route still checks, only slower on first questions, so this is
// informational (GroundingUnits) and never touches Ready. Every route has
// the check: spec.answer.grounding chooses what the client is shown, it
// cannot turn the check off.
type groundingUnits struct {
	store      string
	generation int64 // 0: the store reports no serving generation
	splitter   string
}

// groundingUnitsOf reads the store's serving generation and the splitter
// its chunks' units were cut by ("" for none).
func groundingUnitsOf(store *v1alpha1.KnowledgeStore) *groundingUnits {
	if store == nil {
		return nil
	}
	return &groundingUnits{store: store.Name, generation: store.Status.IndexGeneration, splitter: store.Status.IndexGroundingUnits}
}

// groundingUnitsCondition is True while the route's pods read stored
// units, False while they embed them per turn, and Unknown while that
// cannot be told: the references are broken (the store was not read) or
// the store reports no serving generation (none yet, or no sources, so
// the operator does not read its index).
func groundingUnitsCondition(f routeFacts) metav1.Condition {
	u := f.units
	switch {
	case f.refErr != nil:
		return metav1.Condition{Type: v1alpha1.ConditionGroundingUnits, Status: metav1.ConditionUnknown, Reason: f.refErr.Reason,
			Message: "not known until the route's references resolve (Degraded says why)"}
	case u == nil || u.generation == 0:
		store := "the KnowledgeStore"
		if u != nil {
			store = fmt.Sprintf("KnowledgeStore %q", u.store)
		}
		return metav1.Condition{Type: v1alpha1.ConditionGroundingUnits, Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonNoIndex,
			Message: store + " reports no serving generation: whether its chunks hold their units' vectors is not known"}
	case u.splitter == knowledge.UnitsVersion:
		return condition(v1alpha1.ConditionGroundingUnits, true, v1alpha1.ReasonUnitsStored, fmt.Sprintf(
			"KnowledgeStore %q serves generation %d, whose chunks hold their units' vectors: the grounding check embeds only the answer's sentences",
			u.store, u.generation))
	}
	held, embedded := "whose chunks hold no units' vectors (built before ingestions stored them, or by a run without a unit embedder)",
		"each new fragment's sentences"
	if u.splitter != "" {
		// Units are read by their text: those both splitters cut alike
		// are found, only the others embedded.
		held = fmt.Sprintf("whose chunks hold the vectors of units cut by splitter %q, not %q, the splitter of this version of ragroute",
			u.splitter, knowledge.UnitsVersion)
		embedded = "the units the two cut differently"
	}
	return condition(v1alpha1.ConditionGroundingUnits, false, v1alpha1.ReasonUnitsEmbeddedPerTurn, truncateMessage(fmt.Sprintf(
		"KnowledgeStore %q serves generation %d, %s: the grounding check embeds %s at query time "+
			"(slower first questions, more embedder load) until the store's next ingestion builds a generation with them",
		u.store, u.generation, held, embedded)))
}

// servingUnits is what a route's GroundingUnits depends on in a store's
// status (facts): the serving generation and its units' splitter.
func servingUnits(store *v1alpha1.KnowledgeStore) string {
	return fmt.Sprintf("%d/%s", store.Status.IndexGeneration, store.Status.IndexGroundingUnits)
}
