package tokenize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SpecialTokens is what a BERT-family encoder adds to every input ([CLS]
// and [SEP], or <s> and </s>); a model's input limit counts them.
const SpecialTokens = 2

// InputCounter counts the tokens an embedding server may see for a text:
// BERT's WordPiece count, except that a word longer than BERT's
// 100-character limit counts one token per character. BERT reads such a
// word (an SSH key, a hash, base64) as one [UNK]; llama.cpp has no such
// limit and splits it into pieces, so a cut by BERT's count alone could
// overflow its input. The count is an upper bound for both.
type InputCounter struct {
	bert *WordPiece
}

// NewInputCounter returns the input counter over BERT's uncased
// vocabulary.
func NewInputCounter() InputCounter { return InputCounter{bert: NewBERTUncased()} }

// Count implements Counter. BERT's count of the whole text, corrected
// for the rare overlong words: WordPiece counts add up across whitespace,
// so only those are counted again.
func (c InputCounter) Count(text string) int {
	n := c.bert.Count(text)
	for word := range strings.FieldsFuncSeq(text, unicode.IsSpace) {
		if runes := utf8.RuneCountInString(word); runes > maxWordRunes {
			n += runes - c.bert.Count(word)
		}
	}
	return n
}

// ContentBudget is how many tokens of text fit an encoder input of
// maxInputTokens behind prefix, its special tokens reserved; 0 or less
// means nothing fits.
func (c InputCounter) ContentBudget(maxInputTokens int, prefix string) int {
	return maxInputTokens - SpecialTokens - c.Count(prefix)
}

// InputMarginPercent of an embedder's input limit is kept free when its
// inputs are counted with InputCounter and its own tokenizer is not
// known: a cased WordPiece, XLM-R's SentencePiece (e5, bge-m3) or a BPE.
// On English documentation those count within a few percent of uncased
// WordPiece (BPEs fewer), so a tenth covers the difference; past its limit
// a server cuts the input silently (sentence-transformers) or refuses it
// (llama.cpp).
const InputMarginPercent = 10

// WithInputMargin is limit less InputMarginPercent of it, rounded up: the
// most tokens, as InputCounter counts them, an input for that limit may
// take.
func WithInputMargin(limit int) int {
	return limit - (limit*InputMarginPercent+99)/100
}
