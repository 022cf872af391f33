package assembly

import (
	"cmp"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// rerankHTTPTimeout bounds one call of the cross-encoder's client; the
// route's rerank step deadline (timeouts.rerank) is the tighter one.
const rerankHTTPTimeout = 30 * time.Second

// NewSearcher is the body of search_knowledge as the route's config sets
// it, over p. Its questions are embedded on the Starting lane of a
// replicaEmbedder of its own, whose Finishing lane NewEngine's check
// takes: the turns over one searcher share one client, as in a pod.
func NewSearcher(cfg podconfig.RouteConfig, p Parts) *retrieval.Searcher {
	gen := p.Generation
	if gen == nil {
		gen = FixedGeneration{}
	}
	searcher := &retrieval.Searcher{
		Index:         p.Index,
		Embedder:      newQuestionLane(replicaEmbedder(cfg, p)),
		Reranker:      p.Reranker,
		Cache:         p.Cache,
		Settings:      searchSettings(cfg),
		Generation:    gen.Load,
		Slots:         retrieval.NewStoreSlots(cmp.Or(int(cfg.Limits.MaxSearchesInFlight), retrieval.DefaultMaxSearchesInFlight)),
		IndexMismatch: gen.Mismatch,
		Timeouts: retrieval.Timeouts{Embed: cfg.Timeouts.Embed.Std(), Search: cfg.Timeouts.Search.Std(),
			Rerank: cfg.Timeouts.Rerank.Std()},
		Background: func() *knowledge.Background {
			if g, ok := gen.Serving(); ok {
				return g.Background
			}
			return nil
		},
	}
	if searcher.Cache == nil {
		searcher.Cache = retrieval.NewMemoryCache(int(cfg.Cache.MaxEntries), cfg.Cache.TTL.Std(), time.Now)
	}
	if r := cfg.Retrieval; r.SimilarityFloorSigmas != nil || r.StrictFloorSigmas != nil {
		floors := &retrieval.RelativeFloors{
			Similarity: r.SimilarityFloor, Strict: r.StrictFloor,
			SimilaritySigmas: r.SimilarityFloorSigmas, StrictSigmas: r.StrictFloorSigmas,
			Serving: gen.Serving, Logger: p.Logger,
		}
		searcher.Floors = floors.Floors
	}
	if searcher.Reranker == nil {
		searcher.Reranker = configReranker(cfg, p)
	}
	return searcher
}

// configReranker is the rerank step the route's config names: its
// cross-encoder under rerank.mode crossEncoder, else the fused order.
func configReranker(cfg podconfig.RouteConfig, p Parts) retrieval.Reranker {
	ce := cfg.Rerank.CrossEncoder
	if cfg.Rerank.Mode != podconfig.RerankCrossEncoder || ce == nil {
		return retrieval.KeepOrder{}
	}
	client := p.RerankHTTP
	if client == nil {
		client = &http.Client{Timeout: rerankHTTPTimeout}
	}
	return &retrieval.CrossEncoder{BaseURL: ce.BaseURL, Model: ce.Model, APIKey: p.Secrets.Get(ce.APIKeyEnv),
		TopN: int(ce.TopN), FirstStageWeight: ce.FirstStageWeight, HTTP: client,
		MaxDocumentTokens: int(ce.MaxDocumentTokens), Tokens: tokenize.NewBERTUncased()}
}

// searchSettings are the search body's settings in the route's config:
// the store's primitives and weights, the route's floors and diversity.
func searchSettings(cfg podconfig.RouteConfig) retrieval.SearchSettings {
	var primitives []knowledge.Primitive
	weights := map[knowledge.Primitive]float64{}
	for _, p := range cfg.Store.Search.Primitives {
		primitives = append(primitives, knowledge.Primitive(p))
	}
	for p, w := range cfg.Store.Search.Weights {
		weights[knowledge.Primitive(p)] = w
	}
	return retrieval.SearchSettings{
		Primitives: primitives, Candidates: int(cfg.Store.Search.Candidates), RRFK: int(cfg.Store.Search.RRFK),
		SimilarityFloor: cfg.Retrieval.SimilarityFloor, StrictFloor: cfg.Retrieval.StrictFloor,
		MaxFragments: int(cfg.Retrieval.MaxFragments), Weights: weights, MinConfidence: cfg.Retrieval.MinConfidence,
		Diversity: retrieval.Diversity{MaxPerDocument: int(cfg.Retrieval.Diversity.MaxPerDocument),
			Margin: cfg.Retrieval.Diversity.Margin, Dominance: cfg.Retrieval.Diversity.Dominance},
	}
}
