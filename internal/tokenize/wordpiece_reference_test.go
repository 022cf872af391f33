package tokenize

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// referenceWordPiece is the first, plain implementation of the counter:
// two maps of pieces, a longest-first lookup of every prefix, and BERT's
// basic tokenization over the whole text. It is slow and obviously right
// (it matched Hugging Face on the test vectors before the fast counter
// existed), so the fast counter is tested against it.
type referenceWordPiece struct {
	starts    map[string]struct{} // pieces that may start a word
	continues map[string]struct{} // "##" pieces, stored without "##"
}

func newReferenceWordPiece() *referenceWordPiece {
	w := &referenceWordPiece{starts: map[string]struct{}{}, continues: map[string]struct{}{}}
	for _, line := range strings.Split(bertUncasedVocab, "\n") {
		piece := strings.TrimRight(line, "\r")
		switch {
		case piece == "":
		case strings.HasPrefix(piece, "##"):
			w.continues[piece[2:]] = struct{}{}
		default:
			w.starts[piece] = struct{}{}
		}
	}
	return w
}

func (w *referenceWordPiece) Count(text string) int {
	if referenceIsASCII(text) {
		return w.countASCII(text)
	}
	n := 0
	referenceBasicTokens(text, func(word string) { n += w.countWord([]byte(word)) })
	return n
}

func (w *referenceWordPiece) countASCII(text string) int {
	n := 0
	word := make([]byte, 0, 64)
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			n += w.countWord(word)
			word = word[:0]
		case c == 0 || c < 32 || c == 127:
			// control characters are dropped
		case isPunctuation(rune(c)):
			n += w.countWord(word) + 1
			word = word[:0]
		default:
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			word = append(word, c)
		}
	}
	return n + w.countWord(word)
}

func referenceIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (w *referenceWordPiece) countWord(word []byte) int {
	if len(word) == 0 {
		return 0
	}
	if utf8.RuneCount(word) > maxWordRunes {
		return 1
	}
	pieces := 0
	for start := 0; start < len(word); {
		end := len(word)
		vocab := w.starts
		if start > 0 {
			vocab = w.continues
		}
		for ; end > start; end-- {
			if end < len(word) && !utf8.RuneStart(word[end]) {
				continue
			}
			if _, ok := vocab[string(word[start:end])]; ok {
				break
			}
		}
		if end == start {
			return 1 // the whole word is [UNK]
		}
		pieces++
		start = end
	}
	return pieces
}

func referenceBasicTokens(text string, emit func(string)) {
	var word strings.Builder
	flush := func() {
		if word.Len() > 0 {
			emit(word.String())
			word.Reset()
		}
	}
	for _, r := range norm.NFD.String(strings.ToLower(text)) {
		switch {
		case r == 0 || r == utf8.RuneError || unicode.Is(unicode.Cf, r) || (unicode.IsControl(r) && !unicode.IsSpace(r)):
		case unicode.Is(unicode.Mn, r):
		case unicode.IsSpace(r):
			flush()
		case isPunctuation(r) || isCJK(r):
			flush()
			emit(string(r))
		default:
			word.WriteRune(r)
		}
	}
	flush()
}
