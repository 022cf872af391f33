package controller

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// storeWithUnits is storeServing whose serving generation (generation; 0
// for none) holds the units of splitter ("" for none).
func storeWithUnits(generation int64, splitter string) *v1alpha1.KnowledgeStore {
	store := storeServing("fp", nil)
	store.Status.IndexGeneration, store.Status.IndexGroundingUnits = generation, splitter
	return store
}

// A route says whether its store's serving generation holds the units'
// vectors the grounding check reads (True, Stored) or not (False,
// EmbeddedPerTurn, naming the store and generation and what it costs),
// Unknown while that cannot be told; whichever, a rolled-out route stays
// Ready: the check works either way.
func TestRouteGroundingUnitsSaysWhetherTheCheckEmbedsPerTurn(t *testing.T) {
	serving := &rolloutState{observedCurrent: true, updated: 2, ready: 2, available: 2}
	missingSecret := &referenceError{Reason: v1alpha1.ReasonSecretNotFound, Message: `Secret "llm" not found`}
	for _, tc := range []struct {
		name     string
		facts    routeFacts
		want     wantCondition
		names    []string
		notReady bool
	}{
		{"units stored", routeFacts{units: groundingUnitsOf(storeWithUnits(3, knowledge.UnitsVersion))},
			wantCondition{"True", v1alpha1.ReasonUnitsStored},
			[]string{`KnowledgeStore "docs"`, "generation 3", "embeds only the answer's sentences"}, false},
		{"a generation built before ingestions stored units", routeFacts{units: groundingUnitsOf(storeWithUnits(3, ""))},
			wantCondition{"False", v1alpha1.ReasonUnitsEmbeddedPerTurn},
			[]string{`KnowledgeStore "docs"`, "generation 3", "hold no units' vectors", "at query time", "slower first questions",
				"next ingestion builds a generation with them"}, false},
		{"units of another splitter", routeFacts{units: groundingUnitsOf(storeWithUnits(3, "v0"))},
			wantCondition{"False", v1alpha1.ReasonUnitsEmbeddedPerTurn},
			[]string{`splitter "v0", not "` + knowledge.UnitsVersion + `"`, "the units the two cut differently"}, false},
		{"no serving generation", routeFacts{units: groundingUnitsOf(storeWithUnits(0, ""))},
			wantCondition{"Unknown", v1alpha1.ReasonNoIndex}, []string{`KnowledgeStore "docs" reports no serving generation`}, false},
		{"references broken: the store was not read", routeFacts{refErr: missingSecret},
			wantCondition{"Unknown", v1alpha1.ReasonSecretNotFound}, []string{"Degraded says why"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.facts
			f.desired, f.rollout = 2, serving
			got := routeConditions(f)
			units := meta.FindStatusCondition(got, v1alpha1.ConditionGroundingUnits)
			if units == nil {
				t.Fatalf("no %s condition in %+v", v1alpha1.ConditionGroundingUnits, got)
			}
			if units.Status != tc.want.status || units.Reason != tc.want.reason {
				t.Fatalf("GroundingUnits = %s/%s (%s), want %s/%s", units.Status, units.Reason, units.Message, tc.want.status, tc.want.reason)
			}
			for _, name := range tc.names {
				if !strings.Contains(units.Message, name) {
					t.Errorf("message %q does not name %s", units.Message, name)
				}
			}
			if ready := meta.FindStatusCondition(got, v1alpha1.ConditionReady); (ready.Status == metav1.ConditionTrue) == tc.notReady {
				t.Errorf("Ready = %s/%s: the units decide nothing of it", ready.Status, ready.Reason)
			}
		})
	}
}

// A route's conditions, with kstatus' Reconciling and Stalled, fit the
// status' MaxItems (8).
func TestRouteConditionsFitTheirMaxItems(t *testing.T) {
	if n := len(routeConditions(routeFacts{desired: 1})) + 2; n > 8 {
		t.Errorf("a route reports %d conditions, more than status.conditions' MaxItems of 8", n)
	}
}

// The store's status says whether its serving generation holds units, is
// cleared with the rest when the collection is another store's, and a
// route hears when it, or the generation it names, changes.
func TestStoreStatusNamesTheServingUnits(t *testing.T) {
	status := &v1alpha1.KnowledgeStoreStatus{}
	serve := func(units, owner string) {
		recordIngestion(status, storeFacts{owner: "ns/docs", index: &knowledge.IndexState{Exists: true, Rows: 4,
			Generation: knowledge.Generation{Number: 4, Embedder: "fp", Units: units, Owner: owner}}})
	}
	serve(knowledge.UnitsVersion, "")
	if status.IndexGroundingUnits != knowledge.UnitsVersion {
		t.Errorf("status.indexGroundingUnits %q, want %q", status.IndexGroundingUnits, knowledge.UnitsVersion)
	}
	serve("", "")
	if status.IndexGroundingUnits != "" {
		t.Errorf("a generation without units: status.indexGroundingUnits %q", status.IndexGroundingUnits)
	}
	serve(knowledge.UnitsVersion, "")
	serve(knowledge.UnitsVersion, "team-a/docs")
	if status.IndexGroundingUnits != "" {
		t.Errorf("another store's collection: status.indexGroundingUnits %q", status.IndexGroundingUnits)
	}

	before := storeWithUnits(3, "")
	for name, c := range map[string]struct {
		after *v1alpha1.KnowledgeStore
		want  bool
	}{
		"units stored":               {storeWithUnits(4, knowledge.UnitsVersion), true},
		"a new generation, no units": {storeWithUnits(4, ""), true},
		"the same":                   {storeWithUnits(3, ""), false},
	} {
		if got := referencedFactsChanged.Update(event.UpdateEvent{ObjectOld: before, ObjectNew: c.after}); got != c.want {
			t.Errorf("%s: reconcile the store's routes = %v, want %v", name, got, c.want)
		}
	}
}
