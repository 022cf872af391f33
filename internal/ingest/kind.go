package ingest

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragroute/ragroute/internal/tokenize"
)

var (
	// screenHeadingWords name a UI surface in a heading.
	screenHeadingWords = newWordSet("screen page tab dialog modal panel menu button form sidebar toolbar dashboard ui",
		ruScreen, ruPage, ruTab, ruDialog, ruMenu, ruButton, ruForm, ruSidebar, ruDashboard, ruWebUI)
	// screenCueWords point at UI elements in text, or name the act of
	// using one. Questions are read with the same words (IsScreenWord).
	screenCueWords = newWordSet("click clicking select tab button menu dropdown drop-down checkbox toggle field panel dialog sidebar toolbar page screen icon ui",
		ruClick, ruSelect, ruTab, ruButton, ruMenu, ruDropdown, ruCheckbox, ruToggle, ruField, ruDialog, ruSidebar, ruPage, ruScreen, ruIcon, ruWebUI)
)

// The Russian UI words, each with every form it takes (case and number
// for a noun, gender too for an adjective, the imperatives and infinitive
// for a verb), written with е for ё. A list, not a stem: the stem of поле
// (пол-) also begins полезно and полный, and a stemmer's stems split
// флажок from флажка. Plurals count (поля is a field's and the fields'
// both). Words mostly used otherwise in Russian docs are left out:
// панель (панель управления is the control plane), интерфейс (of an API,
// a command line), окно (of a terminal, or of time), список; форма, like
// "form", names a surface in a heading only (in text it is mostly a shape).
const (
	ruButton    = "кнопка кнопки кнопке кнопку кнопкой кнопкою кнопок кнопкам кнопками кнопках"
	ruCheckbox  = "флажок флажка флажку флажком флажке флажки флажков флажкам флажками флажках чекбокс чекбокса чекбоксу чекбоксом чекбоксе чекбоксы чекбоксов чекбоксам чекбоксами чекбоксах"
	ruClick     = "нажмите нажми нажать нажимать нажимайте нажав нажатие нажатием нажатия нажатии кликните кликни кликнуть кликнув клик клика кликом щелкните щелкни щелкнуть щелкнув щелчок щелчком щелчка"
	ruDashboard = "дашборд дашборда дашборду дашбордом дашборде дашборды дашбордов"
	ruDialog    = "диалог диалога диалогу диалогом диалоге диалоги диалогов диалоговое диалогового диалоговому диалоговым диалоговом диалоговые диалоговых диалоговыми"
	ruDropdown  = "выпадающий выпадающего выпадающему выпадающим выпадающем выпадающая выпадающей выпадающую выпадающее выпадающие выпадающих выпадающими"
	ruField     = "поле поля полю полем полей полям полями полях"
	ruForm      = "форма формы форме форму формой форм формам формами формах"
	ruIcon      = "значок значка значку значком значке значки значков значкам значками значках иконка иконки иконке иконку иконкой иконок иконкам иконками иконках"
	ruMenu      = "меню"
	ruPage      = "страница страницы странице страницу страницей страниц страницам страницами страницах"
	ruScreen    = "экран экрана экрану экраном экране экраны экранов экранам экранами экранах"
	ruSelect    = "выберите выбери"
	ruSidebar   = "сайдбар сайдбара сайдбару сайдбаром сайдбаре"
	ruTab       = "вкладка вкладки вкладке вкладку вкладкой вкладок вкладкам вкладками вкладках"
	ruToggle    = "переключатель переключателя переключателю переключателем переключателе переключатели переключателей переключателям переключателями переключателях"
	ruWebUI     = "веб-интерфейс веб-интерфейса веб-интерфейсу веб-интерфейсом веб-интерфейсе"
)

// IsScreenWord says whether word, in any letter case, points at a UI
// element or names the act of using one, in English or Russian: what a
// screen page's text is full of, and what a screen question names.
func IsScreenWord(word string) bool { return screenCueWords.has(word, isASCII(word)) }

// wordSet is a set of lower-case words. Every word of every chunk is
// looked up, and nearly all miss: the lengths of the ASCII words by first
// and by last letter turn most ASCII words away before the map.
type wordSet struct {
	words       map[string]bool
	first, last [256]uint64 // bit n of first[c] (last[c]): an ASCII word n bytes long starts (ends) with c
}

// maxSetWord bounds the bytes of a word of a set, so a word is lower-cased
// in a buffer on the stack.
const maxSetWord = 64

func newWordSet(lists ...string) *wordSet {
	set := &wordSet{words: map[string]bool{}}
	for _, list := range lists {
		for _, w := range strings.Fields(list) {
			if len(w) >= maxSetWord {
				panic("wordSet: word too long: " + w)
			}
			set.words[w] = true
			if isASCII(w) {
				set.first[w[0]] |= 1 << len(w)
				set.last[w[len(w)-1]] |= 1 << len(w)
			}
		}
	}
	return set
}

// has reports whether the set holds word lower-cased; ascii tells that
// word is ASCII.
func (set *wordSet) has(word string, ascii bool) bool {
	if !ascii {
		return set.hasFolded(word)
	}
	if len(word) >= maxSetWord || !set.mayHold(word) {
		return false
	}
	var buf [maxSetWord]byte
	for i := 0; i < len(word); i++ {
		buf[i] = tokenize.LowerASCII(word[i])
	}
	return set.words[string(buf[:len(word)])] // looked up without allocating
}

// hasFolded looks word up lower-cased and with ё written е, as Russian
// text writes either (foldCyrillic, which the injection patterns' keys
// are read with too).
func (set *wordSet) hasFolded(word string) bool {
	var buf [maxSetWord]byte
	n := 0
	for _, r := range word {
		if lower, ok := foldCyrillic(r); ok {
			r = lower
		} else {
			r = unicode.ToLower(r)
		}
		if n+utf8.RuneLen(r) > len(buf) {
			return false // longer than any word of the set
		}
		n += utf8.EncodeRune(buf[n:], r)
	}
	return set.words[string(buf[:n])]
}

// mayHold is false when no ASCII word of the set has the length, first
// and last letter of word, an ASCII word shorter than maxSetWord bytes.
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
