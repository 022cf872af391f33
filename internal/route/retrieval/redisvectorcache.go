package retrieval

import (
	"context"
	"encoding/binary"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisVectorCache is the VectorCache shared by a route's replicas: one
// MGET per lookup, one pipelined write per store. Vectors never go stale
// (the key names the text and the embedder), so the TTL only lets unused
// ones go; the size bound is Redis' own maxmemory policy.
type RedisVectorCache struct {
	client *redis.Client
	prefix string
	ttl    time.Duration
}

// NewRedisVectorCache keeps vectors under prefix for ttl.
func NewRedisVectorCache(client *redis.Client, prefix string, ttl time.Duration) *RedisVectorCache {
	return &RedisVectorCache{client: client, prefix: prefix, ttl: ttl}
}

func (c *RedisVectorCache) key(k string) string { return c.prefix + "vector:" + k }

// Get returns the vectors Redis holds; a Redis error is a miss of all.
func (c *RedisVectorCache) Get(ctx context.Context, keys []string) [][]float32 {
	out := make([][]float32, len(keys))
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = c.key(k)
	}
	values, err := c.client.MGet(ctx, full...).Result()
	if err != nil {
		return out
	}
	for i, v := range values {
		if s, ok := v.(string); ok {
			out[i] = decodeVector(s)
		}
	}
	return out
}

// Put stores vectors; failures only cost a later miss.
func (c *RedisVectorCache) Put(ctx context.Context, keys []string, vectors [][]float32) {
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	pipe := c.client.Pipeline()
	for i, k := range keys {
		pipe.Set(ctx, c.key(k), encodeVector(vectors[i]), c.ttl)
	}
	_, _ = pipe.Exec(ctx)
}

// encodeVector is a vector as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// decodeVector reads encodeVector's bytes; nil for a malformed value.
func decodeVector(s string) []float32 {
	if len(s)%4 != 0 || s == "" {
		return nil
	}
	b, v := []byte(s), make([]float32, len(s)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
