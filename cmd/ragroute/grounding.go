package main

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/seal"
)

// The grounding check's share of the embedder. It is background work
// beside the turns' query embeddings, which it must never hold up: it has
// a client of its own, at most checkInFlight calls of at most checkBatch
// texts at once, and the fragments' units are embedded once and kept
// (vectorCacheBytes per replica in memory, or in the route's Redis).
const (
	checkInFlight    = 2
	checkBatch       = 16
	vectorCacheBytes = 32 << 20
	// vectorTTL lets unused vectors go from Redis; none goes stale.
	vectorTTL = 24 * time.Hour
)

// newChecker is the grounding check's embedders for a route config.
func newChecker(cfg podconfig.RouteConfig, env environment, rdb *redis.Client, sealer *seal.Sealer) (answer.Checker, model.Embedder) {
	embedder := model.Throttled(newQueryEmbedder(cfg.Store.Embedding, env, queryEmbedTimeout), checkInFlight, checkBatch)
	cache := retrieval.NewMemoryVectorCache(vectorCacheBytes)
	if cfg.Cache.Backend == podconfig.BackendRedis {
		cache = retrieval.NewRedisVectorCache(rdb, sealer, redisPrefix(cfg), vectorTTL)
	}
	units := retrieval.CachedEmbedder{Embedder: embedder, Cache: cache, Identity: "query " + cfg.Store.Embedding.Fingerprint()}
	return answer.Checker{Embedders: answer.Embedders{Units: units, Sentences: embedder}}, embedder
}
