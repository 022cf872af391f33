package podconfig

import (
	"fmt"
	"slices"
)

// Language is a language whose words keyword search stems and whose stop
// words it drops (KnowledgeStore spec.search.lexical.languages).
type Language string

// The languages keyword search can stem: the Snowball stemmers ragroute
// ships (internal/lexical).
const (
	LanguageRussian Language = "russian"
	LanguageEnglish Language = "english"
)

// Lexical is how keyword (BM25) search prepares text, at ingestion and on
// the query alike: both sides of a store must agree, so routes and
// ingestion runs get the same one. No languages (or a config written
// before the field) stems nothing: text goes to Milvus as it is.
type Lexical struct {
	Languages []Language `json:"languages"`
}

// LanguageNames are the languages as plain names, what lexical.New takes.
func (l Lexical) LanguageNames() []string {
	names := make([]string, len(l.Languages))
	for i, lang := range l.Languages {
		names[i] = string(lang)
	}
	return names
}

// Validate refuses a language keyword search cannot stem, and one named
// twice; field is where the config holds l.
func (l Lexical) Validate(field string) []error {
	var errs []error
	for i, lang := range l.Languages {
		if err := oneOf(fmt.Sprintf("%s.languages[%d]", field, i), lang, LanguageRussian, LanguageEnglish); err != nil {
			errs = append(errs, err)
		}
		if slices.Index(l.Languages, lang) < i {
			errs = append(errs, fmt.Errorf("%s.languages names %q twice", field, lang))
		}
	}
	return errs
}
