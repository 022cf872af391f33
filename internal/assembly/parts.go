package assembly

import (
	"log/slog"
	"net/http"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/vectorcache"
)

// Parts are the backends of a route that its caller made; NewSearcher and
// NewEngine build each one left nil from the config, the one way
// `ragroute serve` builds it, so that a caller that leaves a part out
// gets the topology a pod runs.
type Parts struct {
	// Index is the store the route searches; required.
	Index retrieval.Index
	// Generation is the index generation serving the store's alias (the
	// cache keys' generation, the background the relative floors read);
	// nil: generation 0 with nothing recorded.
	Generation Generation
	// Embedder is the replica's client of the store's embedder, behind its
	// query prefix; nil: QueryEmbedder's. NewSearcher shares it between
	// the questions and the grounding check as a pod does (replicaEmbedder):
	// give the client, not a lane of one.
	Embedder knowledge.Embedder
	// Vectors keeps the vectors the grounding check embedded for the
	// fragments' units; nil: in memory.
	Vectors vectorcache.Cache
	// Cache is the exact cache; nil: in memory, sized as the config says.
	Cache retrieval.Cache
	// Chat is the chat model; nil: the config's, when it names one.
	Chat turn.ChatModel
	// Judge is the judge model (answer.judge); nil: the config's, when it
	// names one.
	Judge turn.ChatModel
	// Reranker reorders the candidates in place of the config's rerank
	// step; nil: the config's (rerank.mode). The evaluations' own orders
	// come in here, never as a change to an assembled Searcher.
	Reranker retrieval.Reranker
	// RerankHTTP is the cross-encoder's client; nil: one bounded by
	// rerankHTTPTimeout.
	RerankHTTP *http.Client
	// Secrets reads the secrets the config names (API keys); nil: none.
	Secrets Secrets
	Logger  *slog.Logger
}

// Generation says which index generation serves the store's alias, and
// whether another embedder or keyword analyzer than the route's built it:
// retrieval.GenerationWatch in a pod, a fixed one in the evaluations.
type Generation interface {
	Load() int64
	Serving() (knowledge.Generation, bool)
	Mismatch() error
}

// FixedGeneration is a Generation that never changes.
type FixedGeneration knowledge.Generation

// Load is the generation's number.
func (g FixedGeneration) Load() int64 { return g.Number }

// Serving is the generation, always known.
func (g FixedGeneration) Serving() (knowledge.Generation, bool) { return knowledge.Generation(g), true }

// Mismatch is nil: the caller built the generation with the route's
// embedder and analyzer.
func (g FixedGeneration) Mismatch() error { return nil }

// EmbedderInfo is the embedder a route embeds questions with, as the
// generation it searches must have recorded it.
func EmbedderInfo(e podconfig.Embedding) knowledge.EmbedderInfo {
	return knowledge.EmbedderInfo{Model: e.Model, Dimensions: int(e.Dimensions), QueryPrefix: e.QueryPrefix, DocumentPrefix: e.DocumentPrefix}
}
