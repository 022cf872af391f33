// Package tokenize counts tokens the way an embedding model does, so chunks
// can be kept under the model's real input limit. It imports nothing from
// Kubernetes and does no I/O.
package tokenize

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Counter counts the tokens a model sees for a text (without the special
// tokens a model adds around every input, such as [CLS] and [SEP]).
type Counter interface {
	Count(text string) int
}

//go:embed vocab-bert-uncased.txt
var bertUncasedVocab string

// maxWordRunes is BERT's limit: a longer word is one [UNK] token.
const maxWordRunes = 100

// WordPiece is BERT's uncased tokenizer (basic tokenization, then greedy
// longest-match WordPiece), as used by all-MiniLM-L6-v2, bge-small and
// other BERT-family embedders.
type WordPiece struct {
	starts    map[string]struct{} // pieces that may start a word
	continues map[string]struct{} // "##" pieces, stored without "##"
}

// NewBERTUncased returns the tokenizer of bert-base-uncased's vocabulary.
func NewBERTUncased() *WordPiece {
	w := &WordPiece{starts: map[string]struct{}{}, continues: map[string]struct{}{}}
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

// Count returns the number of WordPiece tokens of text.
func (w *WordPiece) Count(text string) int {
	if isASCII(text) {
		return w.countASCII(text)
	}
	n := 0
	forEachBasicToken(text, func(word string) { n += w.countWord([]byte(word)) })
	return n
}

// countASCII is Count for ASCII text, which needs no Unicode
// normalisation: the common case for documentation, done without
// allocating per word.
func (w *WordPiece) countASCII(text string) int {
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

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// countWord applies greedy longest-match-first WordPiece to one word.
func (w *WordPiece) countWord(word []byte) int {
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

// forEachBasicToken runs BERT's basic tokenization (lower-casing, accent
// stripping, splitting on whitespace and punctuation, CJK characters on
// their own) and calls emit for each resulting word.
func forEachBasicToken(text string, emit func(string)) {
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
			// dropped, as BERT's text cleaning does
		case unicode.Is(unicode.Mn, r):
			// accents are stripped after NFD
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

// isPunctuation follows BERT: all ASCII non-alphanumeric printable
// characters, plus Unicode punctuation.
func isPunctuation(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) || (r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}
