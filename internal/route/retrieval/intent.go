package retrieval

import (
	"strings"
	"unicode"

	"github.com/ragroute/ragroute/internal/ingest"
)

// Intent is what a question asks for.
type Intent string

// Intents: where something is in the UI, or how/why.
const (
	IntentScreen  Intent = "screen"
	IntentConcept Intent = "concept"
)

var (
	// screenAsk are English phrasings that ask where something is.
	screenAsk = []string{"where is", "where do i", "where can i", "where are", "which page", "which tab", "which button",
		"which menu", "which screen", "which field", "what page", "what tab", "what button", "what menu", "in the ui",
		"in the web ui", "on the screen", "on the page", "click", "where to find", "how do i find", "navigate to"}
	// russianAskWords ask where something is (где, куда) or how to get
	// there (перейти), as "where is" and "navigate to" do.
	russianAskWords = setOf("где куда перейти перейдите перейди")
	// russianAskPairs are the Russian "how do I find", "in the UI", "on
	// the screen" and "on the page", as two words.
	russianAskPairs = map[string]bool{"как найти": true, "в интерфейсе": true, "в веб-интерфейсе": true, "на экране": true, "на странице": true}
	// russianClickStems begin the forms of the verbs of clicking, as
	// "click" begins "clicking": нажать, нажмите, кликнуть, щёлкните.
	russianClickStems = []string{"нажм", "нажат", "нажим", "кликн", "щелкн"}
	// russianWhich are the forms of какой and который: before a screen
	// word they ask which one ("какое поле", "на какой вкладке").
	russianWhich = setOf("какой какая какое какую каком какого какому каким какие каких какими " +
		"который которая которое которую котором которого которому которым которой которые которых которыми")
)

// whichReach is how many words after какой a screen word may come:
// "какой пункт меню", "на какой именно вкладке".
const whichReach = 2

// ClassifyIntent is a light rule set: a question asking where a UI element
// is, or naming two UI elements, is a screen question; everything else,
// ambiguous questions included, is a concept question. UI elements are
// the words screen pages point with (ingest.IsScreenWord), in English or
// Russian, so a question mixing both counts both.
func ClassifyIntent(question string) Intent {
	q := strings.ToLower(question)
	// Words keep their hyphens, as a page's do (веб-интерфейс, drop-down),
	// and ё is written е, as the Russian words are.
	words := strings.FieldsFunc(strings.ReplaceAll(q, "ё", "е"), func(r rune) bool { return !unicode.IsLetter(r) && r != '-' })
	ui := 0
	for _, w := range words {
		if ingest.IsScreenWord(w) {
			ui++
		}
	}
	if ((asksInEnglish(q) || asksInRussian(words)) && ui >= 1) || ui >= 2 {
		return IntentScreen
	}
	return IntentConcept
}

func asksInEnglish(q string) bool {
	for _, p := range screenAsk {
		if strings.Contains(q, p) {
			return true
		}
	}
	return false
}

// asksInRussian matches words, not text: a Russian word changes its
// ending, and где is also the end of нигде.
func asksInRussian(words []string) bool {
	for i, w := range words {
		if russianAskWords[w] || (i+1 < len(words) && russianAskPairs[w+" "+words[i+1]]) || startsWithAny(w, russianClickStems) {
			return true
		}
		if russianWhich[w] {
			for _, next := range words[i+1 : min(len(words), i+1+whichReach)] {
				if ingest.IsScreenWord(next) {
					return true
				}
			}
		}
	}
	return false
}

func startsWithAny(w string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}

// setOf is the set of the words of a list.
func setOf(list string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(list) {
		set[w] = true
	}
	return set
}
