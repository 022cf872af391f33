package tokenize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SpecialTokens is what a BERT-family encoder adds to every input ([CLS]
// and [SEP], or <s> and </s>); a model's input limit counts them.
const SpecialTokens = 2

// InputCounter counts the tokens an embedding server may see for a text.
// Over BERT's uncased vocabulary (NewInputCounter), the embedder's own
// tokenizer is not known: the count is WordPiece's, except that a word
// longer than BERT's 100-character limit counts one token per character.
// BERT reads such a word (an SSH key, a hash, base64) as one [UNK];
// llama.cpp has no such limit and splits it into pieces, so a cut by
// BERT's count alone could overflow its input. The count is an upper
// bound for both, and Usable keeps a margin. Over the embedder's own
// tokenizer (NewExactInputCounter) it is that tokenizer's count.
type InputCounter struct {
	bert  *WordPiece
	exact Counter
}

// NewInputCounter returns the input counter over BERT's uncased
// vocabulary.
func NewInputCounter() InputCounter { return InputCounter{bert: NewBERTUncased()} }

// NewExactInputCounter returns the input counter of an embedder whose
// tokenizer is tokens.
func NewExactInputCounter(tokens Counter) InputCounter { return InputCounter{exact: tokens} }

// IsZero says c counts nothing yet: the zero InputCounter.
func (c InputCounter) IsZero() bool { return c.bert == nil && c.exact == nil }

// Usable is how many tokens, as c counts them, an input for limit may
// take: less InputMarginPercent unless c counts as the embedder does.
func (c InputCounter) Usable(limit int) int {
	if c.exact != nil {
		return limit
	}
	return WithInputMargin(limit)
}

// Count implements Counter. BERT's count of the whole text, corrected
// for the rare overlong words: WordPiece counts add up across whitespace,
// so only those are counted again.
func (c InputCounter) Count(text string) int {
	if c.exact != nil {
		return c.exact.Count(text)
	}
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
