package vectorcache

import (
	"container/list"
	"context"
	"sync"
)

// memoryCache is an LRU bounded by the bytes of its vectors, for one
// replica.
type memoryCache struct {
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

// NewMemory keeps vectors up to about maxBytes (0 disables it).
func NewMemory(maxBytes int) Cache {
	return &memoryCache{maxBytes: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
}

// Len is how many vectors the cache holds.
func (c *memoryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *memoryCache) Get(_ context.Context, keys []string) [][]float32 {
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

func (c *memoryCache) Put(_ context.Context, keys []string, vectors [][]float32) {
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
