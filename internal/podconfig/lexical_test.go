package podconfig

import (
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/lexical"
)

// The languages of keyword search are checked where either config is
// loaded, with one rule, naming the field and the values it takes; none
// at all stems nothing and is valid.
func TestLexicalLanguagesAreValidatedInBothConfigs(t *testing.T) {
	ingest := IngestConfig{Version: IngestVersion, Milvus: Milvus{URI: "http://m:19530", Collection: "c"},
		Embedding: Embedding{BaseURL: "http://e/v1", Model: "m", Dimensions: 384},
		Sources:   []Source{{Name: "docs", Path: "/sources/docs"}}}
	for _, tc := range []struct {
		languages []Language
		want      string
	}{
		{[]Language{LanguageRussian, "german"}, `languages[1] "german": want russian or english`},
		{[]Language{LanguageEnglish, LanguageEnglish}, `languages names "english" twice`},
		{[]Language{""}, `languages[0] "": want russian or english`},
	} {
		route := validConfig()
		route.Store.Search.Lexical.Languages = tc.languages
		if err := route.Validate(); err == nil || !strings.Contains(err.Error(), "store.search.lexical."+tc.want) {
			t.Errorf("route with %q: %v, want it to mention store.search.lexical.%s", tc.languages, err, tc.want)
		}
		ingest.Lexical.Languages = tc.languages
		if err := ingest.Validate(); err == nil || !strings.Contains(err.Error(), "lexical."+tc.want) {
			t.Errorf("ingestion with %q: %v, want it to mention lexical.%s", tc.languages, err, tc.want)
		}
	}
	for _, languages := range [][]Language{nil, {}, {LanguageEnglish}, {LanguageEnglish, LanguageRussian}} {
		route := validConfig()
		route.Store.Search.Lexical.Languages = languages
		ingest.Lexical.Languages = languages
		if err := route.Validate(); err != nil {
			t.Errorf("route with %q: %v", languages, err)
		}
		if err := ingest.Validate(); err != nil {
			t.Errorf("ingestion with %q: %v", languages, err)
		}
	}
}

// Every language a config may name is one the analyzer stems: a valid
// config never fails when a pod builds its analyzer.
func TestEveryLanguageIsOneTheAnalyzerStems(t *testing.T) {
	all := Lexical{Languages: []Language{LanguageRussian, LanguageEnglish}}
	if errs := all.Validate("lexical"); len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, err := lexical.New(all.LanguageNames()); err != nil {
		t.Errorf("the analyzer refuses a valid config's languages: %v", err)
	}
}
