package retrieval

import (
	"strings"
	"unicode"
)

// Intent is what a question asks for.
type Intent string

// Intents: where something is in the UI, or how/why.
const (
	IntentScreen  Intent = "screen"
	IntentConcept Intent = "concept"
)

var (
	// screenAsk are phrasings that ask where something is.
	screenAsk = []string{"where is", "where do i", "where can i", "where are", "which page", "which tab", "which button",
		"which menu", "which screen", "which field", "what page", "what tab", "what button", "what menu", "in the ui",
		"in the web ui", "on the screen", "on the page", "click", "where to find", "how do i find", "navigate to"}
	// uiWords name UI elements.
	uiWords = map[string]bool{"button": true, "tab": true, "menu": true, "field": true, "page": true, "screen": true,
		"panel": true, "dialog": true, "checkbox": true, "dropdown": true, "icon": true, "sidebar": true, "toolbar": true,
		"ui": true, "toggle": true, "click": true}
)

// ClassifyIntent is a light rule set: a question asking where a UI element
// is, or naming two UI elements, is a screen question; everything else,
// ambiguous questions included, is a concept question.
func ClassifyIntent(question string) Intent {
	q := strings.ToLower(question)
	asks := false
	for _, p := range screenAsk {
		if strings.Contains(q, p) {
			asks = true
			break
		}
	}
	ui := 0
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if uiWords[w] {
			ui++
		}
	}
	if (asks && ui >= 1) || ui >= 2 {
		return IntentScreen
	}
	return IntentConcept
}
