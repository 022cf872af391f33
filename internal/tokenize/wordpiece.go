// Package tokenize counts tokens the way an embedding model does, so chunks
// can be kept under the model's real input limit, less a margin
// (InputMarginPercent) where the embedder's own tokenizer is not known. It
// imports nothing from Kubernetes and does no I/O.
package tokenize

import (
	_ "embed"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Counter counts the tokens a model sees for a text (without the special
// tokens a model adds around every input, such as [CLS] and [SEP]).
type Counter interface {
	Count(text string) int
}

// SpaceAdditive is a Counter whose counts add up across whitespace:
// Count(a + ws + b) == Count(a) + Count(b) for any run ws of whitespace
// (unicode.IsSpace). Callers may then count parts once and sum instead of
// counting every concatenation again.
type SpaceAdditive interface {
	Counter
	AddsUpAcrossSpace()
}

//go:embed vocab-bert-uncased.txt
var bertUncasedVocab string

// maxWordRunes is BERT's limit: a longer word is one [UNK] token.
const maxWordRunes = 100

// The two roots of WordPiece.vocab.
const (
	startRoot    uint32 = iota // pieces that may start a word
	continueRoot               // "##" pieces, stored without "##"
)

// WordPiece is BERT's uncased tokenizer (basic tokenization, then greedy
// longest-match WordPiece), as used by all-MiniLM-L6-v2, bge-small and
// other BERT-family embedders. It is safe for concurrent use.
type WordPiece struct {
	vocab *trie
}

// bertUncased is built once: the vocabulary never changes.
var bertUncased = sync.OnceValue(buildBERTUncased)

func buildBERTUncased() *WordPiece {
	var starts, continues []string
	for _, line := range strings.Split(bertUncasedVocab, "\n") {
		piece := strings.TrimRight(line, "\r")
		switch {
		case piece == "" || piece == "##":
			// nothing to match: WordPiece never looks up an empty piece
		case strings.HasPrefix(piece, "##"):
			continues = append(continues, piece[2:])
		default:
			starts = append(starts, piece)
		}
	}
	return &WordPiece{vocab: newTrie(starts, continues)}
}

// NewBERTUncased returns the tokenizer of bert-base-uncased's vocabulary.
func NewBERTUncased() *WordPiece { return bertUncased() }

// IsWord reports whether word is one whole piece of the vocabulary, a
// word BERT's tokenizer does not split: the vocabulary's ~20,000 whole
// words are the common words of English prose, so a word it splits
// ("argocd", "kube", "repo") is coined or borrowed.
func (w *WordPiece) IsWord(word string) bool {
	return word != "" && longestPiece(w.vocab, startRoot, word) == len(word)
}

// AddsUpAcrossSpace marks WordPiece as SpaceAdditive: basic tokenization
// ends a word at every whitespace, and nothing it does looks across one
// (lower-casing maps characters one by one; NFD reorders only accents,
// never across a space, which is not one).
func (w *WordPiece) AddsUpAcrossSpace() {}

// Count returns the number of WordPiece tokens of text.
//
// Counts add up across whitespace, so a segment between two whitespaces
// can be counted on its own. ASCII segments (nearly all of a
// documentation corpus) are counted in place: words are looked up as
// they stand, lower-cased byte by byte on the way down the vocabulary
// trie. A segment with anything else (a non-ASCII or a control
// character) is counted again from its start by the full basic
// tokenization.
func (w *WordPiece) Count(text string) int {
	n := 0
	segment, before := 0, 0 // where the current segment starts, and n there
	for i := 0; i < len(text); {
		switch asciiClass[text[i]] {
		case classSpace:
			i++
			segment, before = i, n
		case classPunct:
			n++
			i++
		case classWord:
			end, piece := w.vocab.scanWord(text, i)
			if piece {
				n++
			} else {
				n += countWord(w.vocab, text[i:end], end-i)
			}
			i = end
		default:
			end := i + 1
			for end < len(text) && asciiClass[text[end]] != classSpace {
				end++
			}
			n = before + w.countUnicode(text[segment:end])
			i = end
		}
	}
	return n
}

// Classes of bytes in BERT's basic tokenization, for the ASCII path.
const (
	classOther = iota // a control character or a byte of a non-ASCII one
	classWord         // a letter or digit: part of a word
	classSpace        // ends a word
	classPunct        // ends a word and is a token of its own
)

var asciiClass = func() (class [256]uint8) {
	for c := range 128 {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			class[c] = classSpace
		case c < 32 || c == 127:
			class[c] = classOther
		case isPunctuation(rune(c)):
			class[c] = classPunct
		default:
			class[c] = classWord
		}
	}
	return class
}()

// countUnicode counts a segment without ASCII whitespace by BERT's full
// basic tokenization: lower-casing, NFD, dropping accents and control
// characters, splitting on other whitespace and on punctuation, and
// CJK characters on their own.
func (w *WordPiece) countUnicode(text string) int {
	var word []byte
	n, runes := 0, 0
	flush := func() {
		n += countWord(w.vocab, word, runes)
		word, runes = word[:0], 0
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
			n++ // one character is one token: itself or [UNK]
		default:
			word = utf8.AppendRune(word, r)
			runes++
		}
	}
	flush()
	return n
}

// countWord applies greedy longest-match-first WordPiece to one word of
// the given length in characters.
func countWord[W string | []byte](vocab *trie, word W, runes int) int {
	switch {
	case runes == 0:
		return 0
	case runes > maxWordRunes:
		return 1
	}
	pieces := 0
	for start, root := 0, startRoot; start < len(word); root = continueRoot {
		size := longestPiece(vocab, root, word[start:])
		if size == 0 {
			return 1 // the whole word is [UNK]
		}
		pieces++
		start += size
	}
	return pieces
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
