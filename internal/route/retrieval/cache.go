package retrieval

import (
	"container/list"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Cache is the exact cache in front of embed and retrieve.
type Cache interface {
	Get(key string) ([]Fragment, bool)
	Put(key string, fragments []Fragment)
}

// cacheKey: the normalised query, the asker's sorted principals (two users
// who may see different documents never share an entry) and the index
// generation (a rebuilt index never serves stale fragments).
func cacheKey(query string, principals []string, generation int64) string {
	norm := strings.Join(strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
	sorted := append([]string{}, principals...)
	sort.Strings(sorted)
	return strconv.FormatInt(generation, 10) + "\x00" + strings.Join(sorted, "\x1f") + "\x00" + norm
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

func (c *memoryCache) Get(key string) ([]Fragment, bool) {
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

func (c *memoryCache) Put(key string, fragments []Fragment) {
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
