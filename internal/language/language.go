// Package language tells which language a question is written in, from
// the scripts of its words, so that a route answers, and says "not found",
// in the user's language. It tells apart the languages a route's wording
// can be given in (English and Russian): a question whose words are at
// least a quarter Cyrillic is Russian, English terms mixed in («как
// настроить liveness probe») or not; anything else reads as English.
package language

import (
	"strings"
	"unicode"
)

// Tag is a language's ISO 639-1 code, as a PlatformPrompt's
// notFoundByLanguage keys and browsers' Accept-Language name it.
type Tag string

// The languages a route tells apart.
const (
	English Tag = "en"
	Russian Tag = "ru"
)

// Supported are the tags Of can return, in the order errors list them.
func Supported() []Tag { return []Tag{English, Russian} }

// IsSupported says whether Of can return tag.
func IsSupported(tag string) bool {
	for _, t := range Supported() {
		if string(t) == tag {
			return true
		}
	}
	return false
}

// Name is the language's English name, as a prompt names it to the model.
func (t Tag) Name() string {
	switch t {
	case Russian:
		return "Russian"
	default:
		return "English"
	}
}

// Of is the language text is written in: Russian when at least a quarter
// of its words are Cyrillic, English otherwise (no words included). A
// quarter, not a half: Russian questions name English terms and commands
// (Pod, kubectl rollout undo), often more of them than Russian words,
// while an English question quotes a Russian word rarely and alone.
func Of(text string) Tag {
	var words, cyrillic int
	inWord, wordCyrillic := false, false
	end := func() {
		if inWord {
			words++
			if wordCyrillic {
				cyrillic++
			}
		}
		inWord, wordCyrillic = false, false
	}
	for _, r := range text {
		if !unicode.IsLetter(r) {
			if !unicode.IsNumber(r) && !unicode.Is(unicode.M, r) && r != '-' {
				end()
			}
			continue
		}
		inWord = true
		wordCyrillic = wordCyrillic || unicode.Is(unicode.Cyrillic, r)
	}
	end()
	if words > 0 && 4*cyrillic >= words {
		return Russian
	}
	return English
}

// HasCyrillic says whether s holds a Cyrillic letter: a word the Russian
// rules (stop words, stemming) apply to.
func HasCyrillic(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Cyrillic, r) })
}
