package tokenize

import (
	"fmt"

	"github.com/tiktoken-go/tokenizer"
)

// BPE counts tokens with OpenAI's cl100k_base byte-pair encoding: a real
// chat-model tokenizer, used to budget a chat model's context window when
// its own tokenizer is not known.
type BPE struct {
	codec tokenizer.Codec
}

// NewCL100K returns the cl100k_base counter.
func NewCL100K() (*BPE, error) {
	codec, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		return nil, fmt.Errorf("load cl100k_base: %w", err)
	}
	return &BPE{codec: codec}, nil
}

// Count returns the number of tokens of text.
func (b *BPE) Count(text string) int {
	n, err := b.codec.Count(text)
	if err != nil {
		// Counting never fails on valid UTF-8; be conservative otherwise.
		return len(text)
	}
	return n
}
