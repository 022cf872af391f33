package vectorcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/keyhash"
)

// The grounding check holds each sentence of an answer against the
// sentences of the packed fragments. Those change only with the index, so
// a route embeds each of them once and keeps the vector (Cache),
// instead of embedding every fragment's sentences again on every turn: a
// turn then sends the embedder its question and its answer's sentences.

// Cache keeps embeddings across turns, by vectorKey. A cache that
// fails misses: the texts are embedded.
type Cache interface {
	// Get returns the vector of each key, nil where it holds none.
	Get(ctx context.Context, keys []string) [][]float32
	Put(ctx context.Context, keys []string, vectors [][]float32)
}

// vectorKeyLayout names the key's fields, so that keys of an older layout
// never match.
const vectorKeyLayout = "ragroute/vector-key/v1"

// vectorKey is where text's vector by the embedder that identity names is
// kept: a SHA-256 over length-prefixed fields. The vector is a function of
// the text and the embedder alone, so no index generation is needed: a new
// generation of the same store reuses what it can.
func vectorKey(identity, text string) string {
	h := sha256.New()
	keyhash.Field(h, vectorKeyLayout)
	keyhash.Field(h, identity)
	keyhash.Field(h, text)
	return hex.EncodeToString(h.Sum(nil))
}

// Embedder embeds through a Cache: the texts it holds are not
// sent, the others go in one call and are kept.
type Embedder struct {
	Embedder knowledge.Embedder
	Cache    Cache
	// Identity names the embedder (its model, endpoint and input
	// prefixes) in the keys: vectors of another embedder never match.
	Identity string
	// FillFor, when positive, lets the call for the missing texts outlive
	// a caller that stops waiting, for up to FillFor, and keeps what it
	// returns: vectors needed again (the fragments' units, as long as the
	// index holds them) are then paid for once, even when the first
	// turn's check was cut by its deadline. Zero: the call ends with the
	// caller's context.
	FillFor time.Duration
}

// Embed returns one vector per text, in order.
func (e Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	keys := make([]string, len(texts))
	for i, t := range texts {
		keys[i] = vectorKey(e.Identity, t)
	}
	out := e.Cache.Get(ctx, keys)
	var missing []int
	for i, v := range out {
		if v == nil {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	batch := make([]string, len(missing))
	for j, i := range missing {
		batch[j] = texts[i]
	}
	newKeys := make([]string, len(missing))
	for j, i := range missing {
		newKeys[j] = keys[i]
	}
	vectors, err := e.fill(ctx, batch, newKeys)
	if err != nil {
		return nil, err
	}
	for j, i := range missing {
		out[i] = vectors[j]
	}
	return out, nil
}

// fill embeds texts and keeps their vectors under keys: within the
// caller's context, or, with FillFor, in a call of its own that the
// caller waits for as long as its context lives (and that a shared
// client serves after new turns once it stopped: model.Outlive).
func (e Embedder) fill(ctx context.Context, texts, keys []string) ([][]float32, error) {
	if e.FillFor <= 0 {
		return e.embedAndKeep(ctx, texts, keys)
	}
	type result struct {
		vectors [][]float32
		err     error
	}
	done := make(chan result, 1)
	go func() {
		fill, cancel := model.Outlive(ctx, e.FillFor)
		defer cancel()
		vectors, err := e.embedAndKeep(fill, texts, keys)
		done <- result{vectors, err}
	}()
	select {
	case r := <-done:
		return r.vectors, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for %d vectors: %w", len(texts), ctx.Err())
	}
}

// embedAndKeep is one call for texts, whose vectors are then kept.
func (e Embedder) embedAndKeep(ctx context.Context, texts, keys []string) ([][]float32, error) {
	vectors, err := e.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vectors) != len(texts) {
		return nil, fmt.Errorf("the embedder returned %d vectors for %d texts", len(vectors), len(texts))
	}
	e.Cache.Put(ctx, keys, vectors)
	return vectors, nil
}
