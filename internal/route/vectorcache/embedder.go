package vectorcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ragroute/ragroute/internal/knowledge"
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
	vectors, err := e.Embedder.Embed(ctx, batch)
	if err != nil {
		return nil, err
	}
	if len(vectors) != len(batch) {
		return nil, fmt.Errorf("the embedder returned %d vectors for %d texts", len(vectors), len(batch))
	}
	newKeys := make([]string, len(missing))
	for j, i := range missing {
		out[i], newKeys[j] = vectors[j], keys[i]
	}
	e.Cache.Put(ctx, newKeys, vectors)
	return out, nil
}
