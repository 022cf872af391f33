package assembly

import (
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/vectorcache"
)

// A replica's embedder client is shared by the turns' questions and the
// grounding check (model.Shared): at most embedInFlight calls at once,
// the check's texts first (the Finishing lane, up to embedBatch a call,
// shared by all the turns being checked), a new turn let in only while no
// check text waits or is in a call and no faster than the checks they
// bring are served (the Starting lane's Admit), and the question of a
// turn let in ahead of everything (the Starting lane's Embed). So under
// load new turns wait to start instead of answers ending unchecked, or
// waiting for the verdicts of answers that came with them, and a turn
// started never waits for the check to embed its question. The
// fragments' units' vectors come from the store, where ingestion put
// them; those it lacks are embedded once and kept (vectorCacheBytes per
// replica in memory, or in the vector cache the caller gives, such as the
// route's Redis). The answers' sentences are kept too, in sentenceCacheBytes of the replica's memory apart from the
// units, which they must not evict: they repeat only where answers do
// (the same question over the same fragments, as the exact cache serves
// it again to a model that writes the same answer). A units call goes on
// for up to unitFillFor after the turn stops waiting for its check (the
// annotate policy's deadline, the turn's end), after the new turns' work
// from then on, and its vectors are kept:
// under load the work of a cut check is not lost, and the next turn over
// the same fragments finds them.
const (
	embedInFlight      = 2
	embedBatch         = 16
	vectorCacheBytes   = 32 << 20
	sentenceCacheBytes = 8 << 20
	unitFillFor        = 30 * time.Second
)

// replicaEmbedder is a replica's one client of the store's embedder, as a
// pod builds it: p.Embedder (nil: the store's embedder behind its query
// prefix) behind a model.Shared whose Starting lane the searcher's
// questions take (questionLane) and whose Finishing lane the grounding
// check's. Every route the assembly builds, in a pod or an evaluation,
// gets its embedder here.
func replicaEmbedder(cfg podconfig.RouteConfig, p Parts) *model.Shared {
	client := p.Embedder
	if client == nil {
		client = QueryEmbedder(cfg.Store.Embedding, p.Secrets, QueryEmbedTimeout)
	}
	return model.NewShared(client, embedInFlight, embedBatch)
}

// newChecker is the grounding check for a route config: it reads the
// fragments' units' vectors that ingestion stored in index (when index
// stores them: a knowledge.Store), embeds the others and the answer's
// sentences with embedder (a replicaEmbedder's Finishing lane), and keeps
// the vectors it embedded for units in vectors (nil: in memory).
func newChecker(cfg podconfig.RouteConfig, embedder model.Embedder, vectors vectorcache.Cache, index retrieval.Index) answer.Checker {
	if vectors == nil {
		vectors = vectorcache.NewMemory(vectorCacheBytes)
	}
	identity := "query " + cfg.Store.Embedding.Fingerprint()
	units := vectorcache.Embedder{Embedder: embedder, Cache: vectors, Identity: identity, FillFor: unitFillFor}
	sentences := vectorcache.Embedder{Embedder: embedder, Cache: vectorcache.NewMemory(sentenceCacheBytes), Identity: identity}
	stored, _ := index.(answer.StoredUnits)
	return answer.Checker{Embedders: answer.Embedders{Stored: stored, Units: units, Sentences: sentences}}
}
