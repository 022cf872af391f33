package ingestion

import (
	"context"
	"fmt"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// inputLimit is the embedder's input limit as ingestion keeps it: both
// texts a row embeds (its title path and text, and its title path alone)
// must fit behind the document prefix, with the special tokens, in the
// limit less tokenize's margin for the embedder's own tokenizer. A
// longer one is cut at a word to fit: the stored text stays whole
// (searched by BM25, shown to the model), only its vector misses the
// tail, and the run counts every row so cut.
type inputLimit struct {
	tokens tokenize.InputCounter
	// budget is how many tokens of text fit behind the prefix; 0 means
	// the store declares no limit.
	budget int
}

// newInputLimit is e's input limit; a document prefix that leaves no
// room for text is an error naming both.
func newInputLimit(e podconfig.Embedding) (inputLimit, error) {
	limit := int(e.MaxInputTokens)
	if limit <= 0 {
		return inputLimit{}, nil
	}
	_, tokens := tokenize.ForEmbedder(e.Tokenizer)
	usable := tokens.Usable(limit)
	budget := tokens.ContentBudget(usable, e.DocumentPrefix)
	if budget < 1 {
		return inputLimit{}, fmt.Errorf("embedding.documentPrefix %q takes %d tokens, leaving nothing of embedding.maxInputTokens %d (%d usable)",
			e.DocumentPrefix, tokens.Count(e.DocumentPrefix), limit, usable)
	}
	return inputLimit{tokens: tokens, budget: budget}, nil
}

// fit is text cut to the budget, and whether it had to be.
func (l inputLimit) fit(text string) (string, bool) {
	if l.budget == 0 || l.tokens.Count(text) <= l.budget {
		return text, false
	}
	return tokenize.Truncate(l.tokens, text, l.budget), true
}

// cuts reports whether either text the row embeds is over the limit.
func (l inputLimit) cuts(r knowledge.Row) bool {
	_, text := l.fit(r.EmbeddedText())
	_, title := l.fit(r.TitlePath())
	return text || title
}

// embedder cuts every text to the limit before inner embeds it.
func (l inputLimit) embedder(inner knowledge.Embedder) knowledge.Embedder {
	if l.budget == 0 {
		return inner
	}
	return fitting{inner: inner, limit: l}
}

// fitting is an embedder behind an inputLimit.
type fitting struct {
	inner knowledge.Embedder
	limit inputLimit
}

func (f fitting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	inputs := make([]string, len(texts))
	for i, t := range texts {
		inputs[i], _ = f.limit.fit(t)
	}
	return f.inner.Embed(ctx, inputs)
}
