package tokenize

import "github.com/ragroute/ragroute/internal/podconfig"

// ForEmbedder is the tokenizer a store names (its embedding.tokenizer):
// chunks counts chunk sizes in its tokens, so a Russian page is cut into
// about as many chunks as its English original; inputs counts what the
// embedder is sent, exactly for a tokenizer ragroute holds, with a
// margin over BERT's otherwise.
func ForEmbedder(t podconfig.Tokenizer) (chunks SpaceAdditive, inputs InputCounter) {
	if t == podconfig.TokenizerXLMRoberta {
		u := NewXLMRUnigram()
		return u, NewExactInputCounter(u)
	}
	return NewBERTUncased(), NewInputCounter()
}
