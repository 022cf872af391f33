package vectorcache

import (
	"context"
	"encoding/binary"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/seal"
)

// redisTimeout bounds one call to Redis: a slow cache must cost less than
// the embedding it saves.
const redisTimeout = time.Second

// Redis is the Cache shared by a route's replicas: one
// MGET per lookup, one pipelined write per store. Vectors never go stale
// (the key names the text and the embedder), so the TTL only lets unused
// ones go; the size bound is Redis' own maxmemory policy. Vectors are
// sealed for their key: one that does not open is a miss.
type Redis struct {
	client *redis.Client
	sealer *seal.Sealer
	prefix string
	ttl    time.Duration
}

// NewRedis keeps vectors under prefix for ttl, sealed by sealer.
func NewRedis(client *redis.Client, sealer *seal.Sealer, prefix string, ttl time.Duration) *Redis {
	return &Redis{client: client, sealer: sealer, prefix: prefix, ttl: ttl}
}

func (c *Redis) key(k string) string { return c.prefix + "vector:" + k }

// Get returns the vectors Redis holds; a Redis error is a miss of all.
func (c *Redis) Get(ctx context.Context, keys []string) [][]float32 {
	out := make([][]float32, len(keys))
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
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
			if data, ok := c.sealer.Open(full[i], []byte(s)); ok {
				out[i] = decodeVector(data)
			}
		}
	}
	return out
}

// Put stores vectors; failures only cost a later miss.
func (c *Redis) Put(ctx context.Context, keys []string, vectors [][]float32) {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	pipe := c.client.Pipeline()
	for i, k := range keys {
		key := c.key(k)
		pipe.Set(ctx, key, c.sealer.Seal(key, encodeVector(vectors[i])), c.ttl)
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
func decodeVector(b []byte) []float32 {
	if len(b)%4 != 0 || len(b) == 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
