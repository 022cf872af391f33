package ingest

import (
	"strings"
	"unicode"
)

var (
	// screenHeadingWords name a UI surface in a heading.
	screenHeadingWords = wordSet("screen page tab dialog modal panel menu button form sidebar toolbar dashboard ui")
	// screenCueWords point at UI elements in text.
	screenCueWords = wordSet("click clicking select tab button menu dropdown drop-down checkbox toggle field panel dialog sidebar page screen icon ui")
)

func wordSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}

// countWords counts the words of text that are in set, and all words.
func countWords(text string, set map[string]bool) (hits, words int) {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) {
		words++
		if set[strings.ToLower(w)] {
			hits++
		}
	}
	return hits, words
}

// detectKind calls a chunk a screen description when its headings name a UI
// surface and its text points at UI elements, or when UI cues are dense.
// Front matter `kind:` overrides it.
func detectKind(path []string, text string) Kind {
	cues, words := countWords(text, screenCueWords)
	if words == 0 {
		return KindProse
	}
	headingHits, _ := countWords(strings.Join(path, " "), screenHeadingWords)
	if (headingHits > 0 && cues >= 2) || (float64(cues)/float64(words) >= 0.04 && cues >= 4) {
		return KindScreen
	}
	return KindProse
}
