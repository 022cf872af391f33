package controller

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// storeAnalyzed is storeServing whose spec stems languages (nil: the
// section left out) and whose serving generation's keyword index the
// analyzer indexAnalyzer built.
func storeAnalyzed(languages []v1alpha1.LexicalLanguage, indexAnalyzer string) *v1alpha1.KnowledgeStore {
	store := storeServing("fp", nil)
	if languages != nil {
		store.Spec.Search = &v1alpha1.SearchSettings{Lexical: &v1alpha1.LexicalSettings{Languages: languages}}
	}
	store.Status.IndexAnalyzer = indexAnalyzer
	return store
}

// A route whose store serves a generation of another keyword analyzer
// than its spec names is not Ready, with reason AnalyzerMismatch and a
// message naming both analyzers and why the ingestion has not ended it;
// over a generation of its own analyzer, or one that names none, it is.
func TestRouteReadyNamesAnAnalyzerMismatch(t *testing.T) {
	serving := &rolloutState{observedCurrent: true, updated: 2, ready: 2, available: 2}
	for _, tc := range []struct {
		name  string
		store *v1alpha1.KnowledgeStore
		want  wantCondition
		names []string
	}{
		{"languages emptied, the stemmed index still serves", storeAnalyzed([]v1alpha1.LexicalLanguage{}, "snowball:russian+english/v1"),
			wantCondition{"False", v1alpha1.ReasonAnalyzerMismatch},
			[]string{`"snowball:russian+english/v1"`, `"none"`, `KnowledgeStore "docs"`, "generation 3", "503 analyzer_mismatch",
				"IngestionFailed: embed 20 chunks"}},
		{"english only", storeAnalyzed([]v1alpha1.LexicalLanguage{v1alpha1.LanguageEnglish}, "snowball:russian+english/v1"),
			wantCondition{"False", v1alpha1.ReasonAnalyzerMismatch}, []string{`"snowball:english/v1"`}},
		{"the default, left out", storeAnalyzed(nil, "snowball:russian/v1"), wantCondition{"True", v1alpha1.ReasonAvailable}, nil},
		{"the same languages in another order", storeAnalyzed([]v1alpha1.LexicalLanguage{v1alpha1.LanguageEnglish, v1alpha1.LanguageRussian},
			"snowball:russian+english/v1"), wantCondition{"True", v1alpha1.ReasonAvailable}, nil},
		{"no analyzer recorded: unknown does not block", storeAnalyzed([]v1alpha1.LexicalLanguage{}, ""),
			wantCondition{"True", v1alpha1.ReasonAvailable}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready := routeReadyCondition(routeFacts{desired: 2, rollout: serving, analyzer: analyzerMismatchOf(tc.store)})
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

// The store's status shows which analyzer built the serving generation's
// keyword index, and a route hears when it changes.
func TestStoreStatusNamesTheServingAnalyzer(t *testing.T) {
	status := &v1alpha1.KnowledgeStoreStatus{}
	recordIngestion(status, storeFacts{index: &knowledge.IndexState{Exists: true, Rows: 4,
		Generation: knowledge.Generation{Number: 4, Embedder: "fp", Analyzer: "snowball:russian+english/v1"}}})
	if status.IndexAnalyzer != "snowball:russian+english/v1" {
		t.Errorf("status.indexAnalyzer %q", status.IndexAnalyzer)
	}
	before, after := storeAnalyzed(nil, "none"), storeAnalyzed(nil, "snowball:russian+english/v1")
	if !referencedFactsChanged.Update(event.UpdateEvent{ObjectOld: before, ObjectNew: after}) {
		t.Error("a new serving analyzer does not reconcile the store's routes")
	}
}

// Routes and ingestion runs get one rendering of the languages: the
// default when the section is left out, none for an empty list, and the
// same for any order of one set.
func TestRenderLexical(t *testing.T) {
	both := []podconfig.Language{podconfig.LanguageEnglish, podconfig.LanguageRussian}
	russian := []podconfig.Language{podconfig.LanguageRussian}
	for _, tc := range []struct {
		name   string
		search *v1alpha1.SearchSettings
		want   []podconfig.Language
	}{
		{"no search section", nil, russian},
		{"no lexical section", &v1alpha1.SearchSettings{}, russian},
		{"languages left out", &v1alpha1.SearchSettings{Lexical: &v1alpha1.LexicalSettings{}}, russian},
		{"empty: none", &v1alpha1.SearchSettings{Lexical: &v1alpha1.LexicalSettings{Languages: []v1alpha1.LexicalLanguage{}}}, []podconfig.Language{}},
		{"russian first", &v1alpha1.SearchSettings{Lexical: &v1alpha1.LexicalSettings{
			Languages: []v1alpha1.LexicalLanguage{v1alpha1.LanguageRussian, v1alpha1.LanguageEnglish}}}, both},
	} {
		store := storeServing("fp", nil)
		store.Spec.Search = tc.search
		if got := renderRouteConfig(routeInputs{route: &v1alpha1.QueryRoute{}, store: store}).Store.Search.Lexical.Languages; !slices.Equal(got, tc.want) {
			t.Errorf("%s: the route gets %q, want %q", tc.name, got, tc.want)
		}
		if got := renderIngestConfig(store).Lexical.Languages; !slices.Equal(got, tc.want) {
			t.Errorf("%s: the ingestion gets %q, want %q", tc.name, got, tc.want)
		}
	}
}
