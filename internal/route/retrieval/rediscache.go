package retrieval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/seal"
)

// RedisCache is the exact cache shared by a route's replicas. Entries
// expire after the TTL; the size bound is Redis' own maxmemory policy.
// Entries are sealed for their key: one that does not open (forged,
// sealed under another key, moved from another entry) is a miss.
type RedisCache struct {
	client *redis.Client
	sealer *seal.Sealer
	prefix string
	ttl    time.Duration
}

// NewRedisCache stores entries under prefix for ttl, sealed by sealer.
func NewRedisCache(client *redis.Client, sealer *seal.Sealer, prefix string, ttl time.Duration) *RedisCache {
	return &RedisCache{client: client, sealer: sealer, prefix: prefix, ttl: ttl}
}

// cachedFragment is a Fragment with its text, as stored.
type cachedFragment struct {
	Fragment
	Text     string `json:"text"`
	ParentID string `json:"parent_id"`
	Parts    int    `json:"part_count"`
	Version  string `json:"version"`
}

// key is where entry k lives. k is already cacheKey's digest for the
// Searcher; hashing again keeps any caller's key to a fixed length.
func (c *RedisCache) key(k string) string {
	sum := sha256.Sum256([]byte(k))
	return c.prefix + "cache:" + hex.EncodeToString(sum[:])
}

// Get returns a cached entry; a Redis error is a miss (the search runs).
func (c *RedisCache) Get(ctx context.Context, k string) ([]Fragment, bool) {
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	key := c.key(k)
	sealed, err := c.client.Get(ctx, key).Bytes()
	if err != nil {
		return nil, false
	}
	data, ok := c.sealer.Open(key, sealed)
	if !ok {
		return nil, false
	}
	var stored []cachedFragment
	if json.Unmarshal(data, &stored) != nil {
		return nil, false
	}
	out := make([]Fragment, len(stored))
	for i, s := range stored {
		out[i] = s.Fragment
		out[i].Text, out[i].ParentID, out[i].PartCount, out[i].Version = s.Text, s.ParentID, s.Parts, s.Version
	}
	return out, true
}

// Put stores an entry; failures only cost a later miss.
func (c *RedisCache) Put(ctx context.Context, k string, fragments []Fragment) {
	stored := make([]cachedFragment, len(fragments))
	for i, f := range fragments {
		stored[i] = cachedFragment{Fragment: f, Text: f.Text, ParentID: f.ParentID, Parts: f.PartCount, Version: f.Version}
	}
	data, err := json.Marshal(stored)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	key := c.key(k)
	c.client.Set(ctx, key, c.sealer.Seal(key, data), c.ttl)
}
