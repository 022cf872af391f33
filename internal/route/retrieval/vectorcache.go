package retrieval

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// The grounding check holds each sentence of an answer against the
// sentences of the packed fragments. Those change only with the index, so
// a route embeds each of them once and keeps the vector (VectorCache),
// instead of embedding every fragment's sentences again on every turn: a
// turn then sends the embedder its question and its answer's sentences.

// VectorCache keeps embeddings across turns, by vectorKey. A cache that
// fails misses: the texts are embedded.
type VectorCache interface {
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
	writeKeyField(h, vectorKeyLayout)
	writeKeyField(h, identity)
	writeKeyField(h, text)
	return hex.EncodeToString(h.Sum(nil))
}

// CachedEmbedder embeds through a VectorCache: the texts it holds are not
// sent, the others go in one call and are kept.
type CachedEmbedder struct {
	Embedder knowledge.Embedder
	Cache    VectorCache
	// Identity names the embedder (its model, endpoint and input
	// prefixes) in the keys: vectors of another embedder never match.
	Identity string
}

// Embed returns one vector per text, in order.
func (e CachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
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

// memoryVectorCache is an LRU bounded by the bytes of its vectors, for one
// replica.
type memoryVectorCache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	order    *list.List // front = most recently used
	entries  map[string]*list.Element
}

type vectorEntry struct {
	key    string
	vector []float32
}

// vectorEntryOverhead approximates what an entry costs beside its floats:
// the key, the list element and the map's share.
const vectorEntryOverhead = 160

// NewMemoryVectorCache keeps vectors up to about maxBytes (0 disables it).
func NewMemoryVectorCache(maxBytes int) VectorCache {
	return &memoryVectorCache{maxBytes: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
}

// Len is how many vectors the cache holds.
func (c *memoryVectorCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *memoryVectorCache) Get(_ context.Context, keys []string) [][]float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][]float32, len(keys))
	for i, k := range keys {
		if el, ok := c.entries[k]; ok {
			c.order.MoveToFront(el)
			out[i] = el.Value.(*vectorEntry).vector
		}
	}
	return out
}

func (c *memoryVectorCache) Put(_ context.Context, keys []string, vectors [][]float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range keys {
		size := 4*len(vectors[i]) + vectorEntryOverhead
		if size > c.maxBytes {
			continue
		}
		if el, ok := c.entries[k]; ok {
			c.order.MoveToFront(el)
			continue // the same text by the same embedder: the same vector
		}
		c.entries[k] = c.order.PushFront(&vectorEntry{key: k, vector: vectors[i]})
		c.bytes += size
		for c.bytes > c.maxBytes {
			oldest := c.order.Back()
			entry := oldest.Value.(*vectorEntry)
			c.order.Remove(oldest)
			delete(c.entries, entry.key)
			c.bytes -= 4*len(entry.vector) + vectorEntryOverhead
		}
	}
}
