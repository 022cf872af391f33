package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/testenv"
)

// spec.search.lexical.languages: the API server fills in Russian and
// English where a search section is written without it, keeps an empty
// list (no stemming) as written, and refuses a language no stemmer
// serves, or one named twice, naming the field.
func TestAPIServerDefaultsAndChecksLexicalLanguages(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	store := func(name, search string) *unstructured.Unstructured {
		t.Helper()
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(`
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: `+name+`}
spec:
  milvus: {uri: "http://milvus:19530", collection: `+strings.ReplaceAll(name, "-", "_")+`}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384}
`+search), &obj.Object); err != nil {
			t.Fatalf("test YAML: %v", err)
		}
		obj.SetNamespace(ns)
		return obj
	}

	for _, tc := range []struct {
		name, search string
		want         []v1alpha1.LexicalLanguage
	}{
		{"search-written", "  search: {candidates: 40}\n", []v1alpha1.LexicalLanguage{v1alpha1.LanguageRussian}},
		{"lexical-written", "  search: {lexical: {}}\n", []v1alpha1.LexicalLanguage{v1alpha1.LanguageRussian}},
		{"no-stemming", "  search: {lexical: {languages: []}}\n", []v1alpha1.LexicalLanguage{}},
		{"english-only", "  search: {lexical: {languages: [english]}}\n", []v1alpha1.LexicalLanguage{v1alpha1.LanguageEnglish}},
	} {
		if err := s.client.Create(ctx, store(tc.name, tc.search)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := &v1alpha1.KnowledgeStore{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.name}, got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.Search == nil || got.Spec.Search.Lexical == nil || got.Spec.Search.Lexical.Languages == nil ||
			!slices.Equal(got.Spec.Search.Lexical.Languages, tc.want) {
			t.Errorf("%s: stored search %+v, want languages %q", tc.name, got.Spec.Search, tc.want)
		}
	}

	for _, tc := range []struct {
		name, search string
		want         []string
	}{
		{"unknown", "  search: {lexical: {languages: [russian, german]}}\n",
			[]string{"spec.search.lexical.languages[1]", `supported values: "russian", "english"`}},
		{"twice", "  search: {lexical: {languages: [english, english]}}\n", []string{"spec.search.lexical.languages[1]", "Duplicate value"}},
	} {
		err := s.client.Create(ctx, store("refused-"+tc.name, tc.search))
		if err == nil {
			t.Errorf("%s: the API server accepted it", tc.name)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal does not mention %q:\n%v", tc.name, want, err)
			}
		}
	}
}

// Changing spec.search.lexical.languages starts an ingestion that builds
// a new generation with the new analyzer, and the status names the
// analyzer that built what serves.
func TestChangingLexicalLanguagesBuildsANewGeneration(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	models := testenv.StartModelServer(32)
	t.Cleanup(models.Close)

	pages := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pages-md"}, Data: map[string]string{
		"discounts.md": "# Скидки\n\nСотрудникам положена скидка на обучение.\n",
	}}
	store := newStore(ns, "docs", s.milvusURI)
	store.Spec.Milvus.Collection = "lex_" + strings.ReplaceAll(ns, "-", "_")
	store.Spec.Embedding = v1alpha1.EmbeddingModel{BaseURL: models.BaseURL(), Model: "hash", Dimensions: 32, MaxInputTokens: 256}
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Sources: []v1alpha1.IngestionSource{
		{Name: "pages", ConfigMap: &v1alpha1.LocalObjectRef{Name: "pages-md"}, Principals: []string{"public"}},
	}}
	s.create(t, pages, store)

	servedBy := func(generation int64, analyzer string) {
		t.Helper()
		got := &v1alpha1.KnowledgeStore{}
		eventually(t, waitFor, fmt.Sprintf("generation %d of %s indexed", generation, analyzer), func() error {
			if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "docs"}, got); err != nil {
				return err
			}
			c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionIndexed)
			if c == nil || c.Status != metav1.ConditionTrue || got.Status.IndexGeneration != generation || got.Status.IndexAnalyzer != analyzer {
				return fmt.Errorf("generation %d, analyzer %q, Indexed %+v", got.Status.IndexGeneration, got.Status.IndexAnalyzer, c)
			}
			return nil
		})
	}
	first := s.ingestJob(t, ns, "")
	s.runJobLocally(t, ns, "docs", map[string]*corev1.ConfigMap{"pages": pages})
	s.finishJob(t, first, false)
	servedBy(1, "snowball:russian/v1")

	current := &v1alpha1.KnowledgeStore{}
	if err := s.client.Get(ctx, client.ObjectKeyFromObject(store), current); err != nil {
		t.Fatal(err)
	}
	current.Spec.Search = &v1alpha1.SearchSettings{Lexical: &v1alpha1.LexicalSettings{Languages: []v1alpha1.LexicalLanguage{}}}
	if err := s.client.Update(ctx, current); err != nil {
		t.Fatal(err)
	}
	second := s.ingestJob(t, ns, first.Name)
	s.runJobLocally(t, ns, "docs", map[string]*corev1.ConfigMap{"pages": pages})
	s.finishJob(t, second, false)
	servedBy(2, "none")
}
