// Package lexical prepares text for keyword (BM25) search: every word
// lower-cased, stop words dropped and the rest stemmed by its language's
// Snowball stemmer, so that «скидка», «скидки» and «скидкой» are one term.
// ragroute does it, at ingestion and on the query alike, rather than a
// Milvus analyzer: Milvus Lite accepts analyzer filters and silently drops
// them, so a stemmer configured in Milvus would rank differently in tests
// than in a cluster. Milvus then only splits the prepared text at spaces.
package lexical

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/russian"
	"golang.org/x/text/unicode/norm"
)

// Languages whose words an Analyzer can stem.
const (
	Russian = "russian"
	English = "english"
)

// rulesVersion names the rules below (how text splits into words, ё, the
// stop words); a change that analyzes any text differently bumps it, and
// with it every analyzer's ID, so indexes are rebuilt.
const rulesVersion = "v1"

// language is one stemmer and its stop words, for the words of one script.
type language struct {
	name     string
	script   *unicode.RangeTable
	stem     func(word string, stemStopWords bool) string
	stopWord func(word string) bool
}

// supported are the languages in the order an analyzer's ID names them.
// The stop words are the Snowball project's lists for each language, as
// kljensen/snowball ships them (english.IsStopWord, russian.IsStopWord).
func supported() []language {
	return []language{
		{name: Russian, script: unicode.Cyrillic, stem: russian.Stem, stopWord: russian.IsStopWord},
		{name: English, script: unicode.Latin, stem: english.Stem, stopWord: english.IsStopWord},
	}
}

// Analyzer turns text into the space-separated terms keyword search
// indexes and searches. The zero Analyzer stems nothing and passes text
// through unchanged (Milvus's own analyzer then splits and lower-cases it).
type Analyzer struct {
	languages []language
}

// New is the analyzer for languages (Russian, English; any order, each
// once). None is the zero Analyzer.
func New(languages []string) (Analyzer, error) {
	var a Analyzer
	for _, l := range supported() {
		switch n := count(languages, l.name); {
		case n > 1:
			return Analyzer{}, fmt.Errorf("lexical languages name %s %d times", l.name, n)
		case n == 1:
			a.languages = append(a.languages, l)
		}
	}
	if len(a.languages) != len(languages) {
		return Analyzer{}, fmt.Errorf("lexical languages %q: only %s and %s can be stemmed", languages, Russian, English)
	}
	return a, nil
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// ID names what the analyzer does, e.g. "snowball:russian+english/v1";
// "none" for the zero Analyzer. A generation records the ID of the
// analyzer that built it: a route with another refuses to search it.
func (a Analyzer) ID() string {
	if len(a.languages) == 0 {
		return "none"
	}
	names := make([]string, len(a.languages))
	for i, l := range a.languages {
		names[i] = l.name
	}
	return "snowball:" + strings.Join(names, "+") + "/" + rulesVersion
}

// Analyze is text as keyword search's terms: its words (runs of letters
// and digits; "kube-proxy" and "v1.2" are two words each, as Milvus would
// split them) lower-cased, with ё read as е; a word of one script whose
// language is the analyzer's is dropped when it is a stop word and
// stemmed otherwise; a word with digits or of mixed scripts is kept as
// it is (an identifier, a version). The zero Analyzer returns text.
func (a Analyzer) Analyze(text string) string {
	if len(a.languages) == 0 {
		return text
	}
	var out strings.Builder
	for word := range words(norm.NFC.String(text)) {
		term := a.term(word)
		if term == "" {
			continue
		}
		if out.Len() > 0 {
			out.WriteByte(' ')
		}
		out.WriteString(term)
	}
	return out.String()
}

// term is one word's term, "" for a stop word.
func (a Analyzer) term(word string) string {
	word = fold(word)
	l, ok := a.languageOf(word)
	switch {
	case !ok:
		return word
	case l.stopWord(word):
		return ""
	}
	return l.stem(word, true)
}

// fold is word lower-cased, with ё read as е.
func fold(word string) string {
	return strings.Map(func(r rune) rune {
		if r = unicode.ToLower(r); r == 'ё' {
			return 'е'
		}
		return r
	}, word)
}

// languageOf is the analyzer's language whose script every rune of word
// is in; ok is false when there is none (digits, mixed scripts, a script
// of no language of the analyzer).
func (a Analyzer) languageOf(word string) (language, bool) {
	i := slices.IndexFunc(a.languages, func(l language) bool {
		for _, r := range word {
			if !unicode.Is(l.script, r) {
				return false
			}
		}
		return true
	})
	if i < 0 {
		return language{}, false
	}
	return a.languages[i], true
}

// words yields the maximal runs of letters, digits and combining marks of
// text.
func words(text string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range text {
			inWord := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r)
			switch {
			case inWord && start < 0:
				start = i
			case !inWord && start >= 0:
				if !yield(text[start:i]) {
					return
				}
				start = -1
			}
		}
		if start >= 0 {
			yield(text[start:])
		}
	}
}

// RussianTerm is what keyword search makes of one Russian word: its
// Snowball stem, "" for a stop word; a word not all Cyrillic comes back
// lower-cased. The route's word checks (a question's content words, its
// coverage by the fragments) read Russian with it, so they fold
// inflections by the rules the index does.
func RussianTerm(word string) string {
	russianOnly, _ := New([]string{Russian}) // a supported language: never an error
	return russianOnly.term(word)
}

// IsRussianStopWord says whether word is one of the Snowball Russian stop
// words keyword search drops (any case, ё read as е), without stemming it.
func IsRussianStopWord(word string) bool {
	return russian.IsStopWord(fold(word))
}
