package ingest

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragroute/ragroute/internal/tokenize"
)

var (
	// screenHeadingWords name a UI surface in a heading.
	screenHeadingWords = newWordSet("screen page tab dialog modal panel menu button form sidebar toolbar dashboard ui")
	// screenCueWords point at UI elements in text.
	screenCueWords = newWordSet("click clicking select tab button menu dropdown drop-down checkbox toggle field panel dialog sidebar page screen icon ui")
)

// wordSet is a set of lower-case ASCII words. Every word of every chunk
// is looked up, and nearly all miss: the lengths of the words by first
// and by last letter turn most of them away before the map.
type wordSet struct {
	words       map[string]bool
	first, last [256]uint64 // bit n of first[c] (last[c]): a word n bytes long starts (ends) with c
}

func newWordSet(words string) *wordSet {
	set := &wordSet{words: map[string]bool{}}
	for _, w := range strings.Fields(words) {
		set.words[w] = true
		set.first[w[0]] |= 1 << len(w)
		set.last[w[len(w)-1]] |= 1 << len(w)
	}
	return set
}

// has reports whether the set holds word lower-cased; ascii tells that
// word is ASCII.
func (set *wordSet) has(word string, ascii bool) bool {
	if !ascii || len(word) >= 32 {
		return set.words[strings.ToLower(word)] // rare: allocating is fine
	}
	if !set.mayHold(word) {
		return false
	}
	var buf [32]byte
	for i := 0; i < len(word); i++ {
		buf[i] = tokenize.LowerASCII(word[i])
	}
	return set.words[string(buf[:len(word)])] // looked up without allocating
}

// mayHold is false when no word of the set has the length, first and last
// letter of word, an ASCII word shorter than 32 bytes.
func (set *wordSet) mayHold(word string) bool {
	size := uint64(1) << len(word)
	return set.first[tokenize.LowerASCII(word[0])]&set.last[tokenize.LowerASCII(word[len(word)-1])]&size != 0
}

// countWords counts the words of text that are in set, and all words. A
// word is a run of letters and hyphens. It runs over every chunk: ASCII
// bytes are told apart by a table, only other characters are decoded.
func countWords(text string, set *wordSet) (hits, words int) {
	for i := 0; i < len(text); {
		if wordByte[text[i]] == notWord {
			i++
			continue
		}
		end, ascii := wordEnd(text, i)
		if end == i { // a non-ASCII character that is not a letter
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			continue
		}
		words++
		if set.has(text[i:end], ascii) {
			hits++
		}
		i = end
	}
	return hits, words
}

// wordEnd returns where the word starting at text[i] ends (i when none
// starts there), and whether it is all ASCII.
func wordEnd(text string, i int) (end int, ascii bool) {
	ascii = true
	for i < len(text) {
		switch wordByte[text[i]] {
		case asciiWord:
			i++
		case notWord:
			return i, ascii
		default:
			r, size := utf8.DecodeRuneInString(text[i:])
			if !unicode.IsLetter(r) {
				return i, ascii
			}
			i, ascii = i+size, false
		}
	}
	return i, ascii
}

// Classes of bytes for countWords.
const (
	notWord   = iota // an ASCII byte that is not part of a word
	asciiWord        // an ASCII letter or the hyphen
	nonASCII         // part of a non-ASCII character: decode it
)

var wordByte = func() (table [256]uint8) {
	for c := range table {
		switch {
		case c >= utf8.RuneSelf:
			table[c] = nonASCII
		case c == '-' || unicode.IsLetter(rune(c)):
			table[c] = asciiWord
		}
	}
	return table
}()

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
