package assembly

import (
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/vectorcache"
)

// The grounding check's share of the embedder. It is background work
// beside the turns' query embeddings, which it must never hold up: it has
// a client of its own, at most checkInFlight calls of at most checkBatch
// texts at once, shared by all the turns being checked (model.Throttled),
// and the fragments' units are embedded once and kept
// (vectorCacheBytes per replica in memory, or in the vector cache the
// caller gives, such as the route's Redis). The answers' sentences are
// kept too, in sentenceCacheBytes of the replica's memory apart from the
// units, which they must not evict: they repeat only where answers do
// (the same question over the same fragments, as the exact cache serves
// it again to a model that writes the same answer). A units call goes on
// for up to unitFillFor after the turn stops waiting for its check (the
// annotate policy's deadline, the turn's end) and its vectors are kept:
// under load the work of a cut check is not lost, and the next turn over
// the same fragments finds them.
const (
	checkInFlight      = 2
	checkBatch         = 16
	vectorCacheBytes   = 32 << 20
	sentenceCacheBytes = 8 << 20
	unitFillFor        = 30 * time.Second
)

// Checker is the grounding check's embedders for a route config,
// keeping the units' vectors in vectors (nil: in memory), and the
// throttled client it embeds with.
func Checker(cfg podconfig.RouteConfig, secrets Secrets, vectors vectorcache.Cache) (answer.Checker, model.Embedder) {
	embedder := model.Throttled(QueryEmbedder(cfg.Store.Embedding, secrets, QueryEmbedTimeout), checkInFlight, checkBatch)
	if vectors == nil {
		vectors = vectorcache.NewMemory(vectorCacheBytes)
	}
	identity := "query " + cfg.Store.Embedding.Fingerprint()
	units := vectorcache.Embedder{Embedder: embedder, Cache: vectors, Identity: identity, FillFor: unitFillFor}
	sentences := vectorcache.Embedder{Embedder: embedder, Cache: vectorcache.NewMemory(sentenceCacheBytes), Identity: identity}
	return answer.Checker{Embedders: answer.Embedders{Units: units, Sentences: sentences}}, embedder
}
