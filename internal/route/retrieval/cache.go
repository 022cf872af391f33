package retrieval

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/ragroute/ragroute/internal/route/keyhash"
)

// Cache is the exact cache in front of embed and retrieve. A cache that
// fails misses: the search runs. ctx is the search's; a shared cache
// bounds each call further (cacheTimeout).
type Cache interface {
	Get(ctx context.Context, key string) ([]Fragment, bool)
	Put(ctx context.Context, key string, fragments []Fragment)
}

// cacheTimeout bounds one call to a shared cache: a slow cache must cost
// less than the search it saves.
const cacheTimeout = time.Second

// cacheKeyLayout names the layout of the key's fields, so that keys of an
// older layout, still in a shared Redis during a rollout, never match.
const cacheKeyLayout = "ragroute/cache-key/v2"

// cacheKey is the exact cache's key: a SHA-256 over length-prefixed fields
// (layout, index generation, the number of principals, each principal,
// the normalised query). Two users who may see different documents never
// share an entry, and no principal or query text can forge a field
// boundary, whatever bytes a JWT group holds. The principals are the list
// sent to Milvus, sorted: the ACL filter is a set, so order cannot change
// what it lets through. The generation keeps a rebuilt index from serving
// stale fragments. Both caches (memory and Redis) store under this key.
func cacheKey(query string, principals []string, generation int64) string {
	h := sha256.New()
	keyhash.Field(h, cacheKeyLayout)
	keyhash.Field(h, strconv.FormatInt(generation, 10))
	keyhash.Field(h, strconv.Itoa(len(principals)))
	for _, p := range slices.Sorted(slices.Values(principals)) {
		keyhash.Field(h, p)
	}
	keyhash.Field(h, NormaliseQuery(query))
	return hex.EncodeToString(h.Sum(nil))
}

// sentenceEnds are the marks a question may or may not end with; they do
// not change what is asked.
const sentenceEnds = "?!.？！。"

// NormaliseQuery folds the differences that do not change what is asked:
// Unicode form (NFC), case (full case folding), runs of whitespace, and a
// trailing sentence mark. Symbols, punctuation elsewhere, emoji and
// non-Latin text are kept: "C++ setup" and "C setup" are different
// questions, and so are two emoji-only ones. It is the one rule of what
// makes two queries the same text: the exact cache keys on it, and the
// agentic harness's test for a repeated search starts from it.
func NormaliseQuery(query string) string {
	folded := norm.NFC.String(cases.Fold().String(norm.NFC.String(query)))
	folded = strings.Join(strings.Fields(folded), " ")
	// A query of nothing but sentence marks keeps them, as it is all there is.
	if trimmed := strings.TrimRight(folded, sentenceEnds+" "); trimmed != "" {
		return trimmed
	}
	return folded
}

// memoryCache is a bounded LRU with a TTL, for one replica.
type memoryCache struct {
	mu      sync.Mutex
	ttl     time.Duration
	max     int
	now     func() time.Time
	order   *list.List // front = most recently used
	entries map[string]*list.Element
}

type cacheEntry struct {
	key       string
	fragments []Fragment
	expires   time.Time
}

// NewMemoryCache returns an LRU of at most maxEntries entries living ttl.
// maxEntries 0 disables caching.
func NewMemoryCache(maxEntries int, ttl time.Duration, now func() time.Time) Cache {
	return &memoryCache{ttl: ttl, max: maxEntries, now: now, order: list.New(), entries: map[string]*list.Element{}}
}

// Len is how many entries the cache holds (expired ones until read).
func (c *memoryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *memoryCache) Get(_ context.Context, key string) ([]Fragment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	entry := el.Value.(*cacheEntry)
	if c.now().After(entry.expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return nil, false
	}
	c.order.MoveToFront(el)
	return append([]Fragment{}, entry.fragments...), true
}

func (c *memoryCache) Put(_ context.Context, key string, fragments []Fragment) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	entry := &cacheEntry{key: key, fragments: append([]Fragment{}, fragments...), expires: c.now().Add(c.ttl)}
	if el, ok := c.entries[key]; ok {
		el.Value = entry
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(entry)
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
	}
}
