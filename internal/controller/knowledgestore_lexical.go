package controller

import (
	"slices"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// renderLexical is the store's keyword analyzer as routes and ingestion
// runs both get it: the same terms on both sides of the index. A section
// left out stems the default languages; an empty list, none.
func renderLexical(s *v1alpha1.SearchSettings) podconfig.Lexical {
	languages := v1alpha1.DefaultLexicalLanguages
	if s != nil && s.Lexical != nil && s.Lexical.Languages != nil {
		languages = s.Lexical.Languages
	}
	out := podconfig.Lexical{Languages: []podconfig.Language{}}
	for _, l := range languages {
		out.Languages = append(out.Languages, podconfig.Language(l))
	}
	slices.Sort(out.Languages) // a set: order must not change the hash
	return out
}
