package turn

import (
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/language"
)

// forQuestion is the prompt of one turn: the question's language, which
// picks the not-found wording and the language the model is told to
// answer in.
func (p Prompt) forQuestion(question string) Prompt {
	p.Language = language.Of(question)
	return p
}

// notFound is the wording for the turn's language: the platform's own
// for that language, or its default.
func (p Prompt) notFound() string {
	if w := p.NotFoundByLanguage[string(p.Language)]; strings.TrimSpace(w) != "" {
		return w
	}
	return p.NotFound
}

// isNotFound says whether a reply is one of the platform's not-found
// wordings, in any language: a model may answer with another language's.
func (p Prompt) isNotFound(reply string) bool {
	reply = strings.TrimSpace(reply)
	return reply != "" && slices.Contains(p.wordings(), reply)
}

// wordings are the platform's not-found wordings, every language's,
// trimmed.
func (p Prompt) wordings() []string {
	out := []string{strings.TrimSpace(p.NotFound)}
	for _, w := range p.NotFoundByLanguage {
		out = append(out, strings.TrimSpace(w))
	}
	return out
}
