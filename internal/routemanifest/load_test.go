package routemanifest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// samples are the repository's sample manifests, as make demo applies them.
func samples(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "config", "samples")
	return []string{filepath.Join(dir, "v1alpha1_queryroute.yaml"), filepath.Join(dir, "v1alpha1_knowledgestore.yaml"),
		filepath.Join(dir, "v1alpha1_platformprompt.yaml")}
}

// The sample route renders as the operator ships it: the sample's own
// settings, and the CRD defaults where the sample is silent.
func TestTheSampleRouteRendersAsShipped(t *testing.T) {
	cfg, err := Load(samples(t)...)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Route.Name != "support" || cfg.Route.Namespace != "default" {
		t.Errorf("route %s/%s, want default/support", cfg.Route.Namespace, cfg.Route.Name)
	}
	if cfg.Retrieval.MaxFragments != 4 || cfg.Rerank.Mode != podconfig.RerankCrossEncoder || cfg.Rerank.CrossEncoder.TopN != 20 {
		t.Errorf("the sample's own settings were not kept: maxFragments %d, rerank %+v", cfg.Retrieval.MaxFragments, cfg.Rerank)
	}
	if !cfg.Retrieval.Research || cfg.Retrieval.Diversity.MaxPerDocument != v1alpha1.DefaultMaxPerDocument {
		t.Errorf("the CRD defaults were not filled in: research %v, maxPerDocument %d", cfg.Retrieval.Research, cfg.Retrieval.Diversity.MaxPerDocument)
	}
	if !strings.Contains(cfg.Prompt.Platform, "ACME") || cfg.Prompt.NotFound == "" || cfg.Prompt.Styles["concept"] == "" {
		t.Errorf("the prompt was not rendered: %+v", cfg.Prompt)
	}
	if cfg.Store.Embedding.Model != "all-MiniLM-L6-v2" || cfg.Store.Search.Weights["textSparse"] != 0.5 {
		t.Errorf("the store was not rendered: %+v", cfg.Store)
	}
}

// The Russian sample route renders with its multilingual embedder as the
// store names it: e5's prefixes, its XLM-R tokens, Russian stemming, no
// English cross-encoder, the not-found wording in Russian.
func TestTheRussianSampleRouteRendersAsShipped(t *testing.T) {
	dir := filepath.Join("..", "..", "config", "samples", "ru")
	cfg, err := Load(filepath.Join(dir, "v1alpha1_queryroute.yaml"), filepath.Join(dir, "v1alpha1_knowledgestore.yaml"),
		filepath.Join(dir, "v1alpha1_platformprompt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Store.Embedding
	if e.Model != "multilingual-e5-small" || e.Tokenizer != podconfig.TokenizerXLMRoberta || e.QueryPrefix != "query: " || e.DocumentPrefix != "passage: " {
		t.Errorf("the Russian store's embedder: %+v", e)
	}
	if got := cfg.Store.Search.Lexical.LanguageNames(); !slices.Equal(got, []string{"russian"}) {
		t.Errorf("keyword search stems %q, want russian", got)
	}
	if cfg.Rerank.Mode != podconfig.RerankRRF {
		t.Errorf("rerank %+v, want rrf: the English cross-encoder reads no Russian", cfg.Rerank)
	}
	if !strings.Contains(cfg.Prompt.NotFound, "не нашлось") || !strings.Contains(cfg.Prompt.Platform, "Отвечай на языке вопроса") {
		t.Errorf("the prompt: %+v", cfg.Prompt)
	}
}

// Bad manifests are refused with an error that names the problem.
func TestBadManifestsAreRefusedByName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	files := samples(t)
	for _, tc := range []struct {
		name  string
		paths []string
		want  string
	}{
		{"no store", []string{files[0], files[2]}, `KnowledgeStore "docs"`},
		{"no prompt", []string{files[0], files[1]}, `PlatformPrompt "default"`},
		{"no route", []string{files[1], files[2]}, "want one QueryRoute, found 0"},
		{"misspelled field", []string{write("typo.yaml", strings.Replace(mustRead(t, files[0]), "maxFragments", "maxFragment", 1)), files[1], files[2]},
			`unknown field "maxFragment"`},
		{"missing file", []string{filepath.Join(dir, "none.yaml")}, "none.yaml"},
	} {
		if _, err := Load(tc.paths...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.want)
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// An evaluation's changes to the shipped route are listed setting by
// setting, and only those.
func TestDeviationsListEachChangedSetting(t *testing.T) {
	shipped, err := Load(samples(t)...)
	if err != nil {
		t.Fatal(err)
	}
	if got := Deviations(shipped, shipped); len(got) != 0 {
		t.Fatalf("no change, yet deviations %v", got)
	}
	used := shipped
	used.Retrieval.MaxFragments = 10
	used.Model.BaseURL = "http://127.0.0.1:18081/v1"
	used.Rerank.CrossEncoder = nil
	got := strings.Join(Deviations(shipped, used), "\n")
	for _, want := range []string{"retrieval.maxFragments: 4 → 10", `model.baseURL: "http://llm.models.svc/v1" → "http://127.0.0.1:18081/v1"`,
		"rerank.crossEncoder.topN: 20 → unset"} {
		if !strings.Contains(got, want) {
			t.Errorf("deviations\n%s\nlack %q", got, want)
		}
	}
	if strings.Contains(got, "window") {
		t.Errorf("an unchanged setting is listed:\n%s", got)
	}
}
