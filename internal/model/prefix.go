package model

import (
	"context"
	"fmt"

	"github.com/ragroute/ragroute/internal/tokenize"
)

// Embedder turns texts into vectors, in order (Embeddings is one; so is
// knowledge.Embedder, the same method).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// prefixed embeds every text behind a fixed prefix.
type prefixed struct {
	inner  Embedder
	prefix string
	// budget is how many tokens of each text fit behind the prefix; 0
	// means no limit.
	budget int
	tokens tokenize.InputCounter
	// err says why nothing fits behind the prefix.
	err error
}

// WithPrefix returns an embedder that puts prefix, verbatim, in front of
// every text before inner embeds it, for models trained with input
// prefixes (e5's "query: " and "passage: ", nomic-embed's
// "search_query: "). With maxInputTokens set, each text is first cut (at a
// word boundary, in the tokens of tokens, the store's embedder's) so
// that prefix and text together fit: cut after joining, the text would
// lose more than its share, and a cut that dropped the prefix would embed
// in the wrong space. A prefix that leaves no room fails every Embed with
// an error that says so. An empty prefix returns inner itself.
func WithPrefix(inner Embedder, prefix string, maxInputTokens int, tokens tokenize.InputCounter) Embedder {
	if prefix == "" {
		return inner
	}
	p := &prefixed{inner: inner, prefix: prefix}
	if maxInputTokens > 0 {
		p.tokens = tokens
		p.budget = p.tokens.ContentBudget(maxInputTokens, prefix)
		if p.budget < 1 {
			p.err = fmt.Errorf("input prefix %q takes %d tokens, leaving nothing of the embedder's %d-token input",
				prefix, p.tokens.Count(prefix), maxInputTokens)
		}
	}
	return p
}

// RetryCounter is a client that counts its retried calls (Chat,
// Embeddings, and a prefixed Embeddings).
type RetryCounter interface {
	Retries() int64
}

// Retries is the inner embedder's count of retried calls, or 0 when it
// keeps none.
func (p *prefixed) Retries() int64 { return retriesOf(p.inner) }

// retriesOf is e's count of retried calls, or 0 when it keeps none.
func retriesOf(e Embedder) int64 {
	if counter, ok := e.(RetryCounter); ok {
		return counter.Retries()
	}
	return 0
}

// Embed embeds prefix + text for each text.
func (p *prefixed) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if p.err != nil {
		return nil, p.err
	}
	inputs := make([]string, len(texts))
	for i, t := range texts {
		if p.budget > 0 {
			t = tokenize.Truncate(p.tokens, t, p.budget)
		}
		inputs[i] = p.prefix + t
	}
	return p.inner.Embed(ctx, inputs)
}
