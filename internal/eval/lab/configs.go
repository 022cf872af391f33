package lab

import (
	"context"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// Configuration names, in the order they are reported.
const (
	FixedDense    = "fixed-1024-dense"
	TreeDense     = "tree-dense"
	TreeHybrid    = "tree-hybrid"
	RouteV1       = "route-v1"
	RouteMargin   = "route-v1+margin"
	RouteScreen   = "route-v1+margin+best-first"
	RouteWeights  = "route-v1+margin+best-first+weights"
	RouteDefault  = "route"
	RouteShipped  = "route (shipped)"
	RouteWeighted = "route-weighted"
	defaultRRFK   = 60
)

// config is one configuration: a name and how it answers a question.
type config struct {
	name string
	// timed: each search runs on its own against Milvus, so its time is
	// what a user would wait.
	timed  bool
	search func(ctx context.Context, q eval.Question) (eval.Outcome, error)
}

// configs are the ablations, baseline first, then the route body with
// its rules switched on one at a time: v1 (equal weights, one fragment per
// document, screen fragments first), the diversity margin, the best
// candidate kept first for screen questions, the default weights, then a
// dominant document's sections let in, which is the route as it ships.
// Each row is a route config the assembly builds whole; v1's screen-first
// order, which the route never ships, is the lab's own step (screenFirst).
func (r *run) configs() []config {
	dense := []knowledge.Primitive{knowledge.TextDense}
	equal := map[knowledge.Primitive]float64{}
	for _, p := range knowledge.AllPrimitives {
		equal[p] = 1
	}
	v1 := r.fusionRoute(equal)
	v1.Retrieval.Diversity = podconfig.Diversity{}
	margin := v1
	margin.Retrieval.Diversity = marginOnly()
	weights := r.fusionRoute(nil)
	weights.Retrieval.Diversity.Dominance = 0
	return []config{
		r.storeConfig(FixedDense, r.fixed, dense),
		r.storeConfig(TreeDense, r.tree, dense),
		r.storeConfig(TreeHybrid, r.tree, nil),
		r.routeConfig(RouteV1, v1, screenFirst{}),
		r.routeConfig(RouteMargin, margin, screenFirst{}),
		r.routeConfig(RouteScreen, margin, nil),
		r.routeConfig(RouteWeights, weights, nil),
		r.routeConfig(RouteDefault, r.fusionRoute(nil), nil),
	}
}

// marginOnly is the route's default diversity without the dominance rule:
// at most a few fragments per document, within the margin of its best.
func marginOnly() podconfig.Diversity {
	d := retrieval.DefaultDiversity()
	return podconfig.Diversity{MaxPerDocument: int32(d.MaxPerDocument), Margin: d.Margin}
}

// storeConfig searches a store directly: the primitives fused, no floors,
// no diversity.
func (r *run) storeConfig(name string, store *knowledge.Store, primitives []knowledge.Primitive) config {
	return config{name: name, timed: true, search: func(ctx context.Context, q eval.Question) (eval.Outcome, error) {
		hits, err := store.HybridSearch(ctx, knowledge.SearchRequest{Query: q.Question, Vector: r.vectors[q.Question],
			Principals: []string{"public"}, Primitives: primitives, Candidates: eval.TopK, RRFK: defaultRRFK})
		units := make([]eval.Unit, len(hits))
		for i, h := range hits {
			units[i] = eval.Unit{Source: h.Source, Text: h.Text, HeadingPath: h.HeadingPath}
		}
		return eval.Outcome{Units: units}, err
	}}
}

// fusionRoute is the route's config ranked eval.TopK deep (the ranking
// figures read ten) and ordered by fusion alone, with weights (nil: the
// route's): the ablations' rows. Their floors are the raw ones; under a
// cross-encoder the route's strict floor reads the reranker's relevance,
// so these rows keep none.
func (r *run) fusionRoute(weights map[knowledge.Primitive]float64) podconfig.RouteConfig {
	cfg := r.opts.Route
	cfg.Retrieval.MaxFragments = eval.TopK
	cfg.Store.Search.Candidates = min(cfg.Store.Search.Candidates, searchDepth) // the rankings are fetched this deep
	if weights != nil {
		cfg.Store.Search.Weights = map[string]float64{}
		for p, w := range weights {
			cfg.Store.Search.Weights[string(p)] = w
		}
	}
	if cfg.Rerank.Mode == podconfig.RerankCrossEncoder {
		cfg.Retrieval.StrictFloor = 0
	}
	cfg.Rerank = podconfig.Rerank{Mode: podconfig.RerankRRF}
	cfg.Retrieval.SimilarityFloorSigmas, cfg.Retrieval.StrictFloorSigmas = nil, nil
	return cfg
}

// routeConfig runs the route's search body as cfg sets it, floors
// included, over the question's rankings, its candidates ordered by order
// (nil: as cfg says).
func (r *run) routeConfig(name string, cfg podconfig.RouteConfig, order retrieval.Reranker) config {
	s := r.searcher(cfg, order, r.index, staticEmbedder(r.vectors))
	return config{name: name, search: func(ctx context.Context, q eval.Question) (eval.Outcome, error) {
		found, err := s.Search(ctx, q.Question, []string{"public"})
		return fragmentOutcome(found), err
	}}
}

// shippedConfig is the route's search body as it ships, its reranker
// included, ranked eval.TopK deep. It runs after the cross-encoder rows,
// whose one-at-a-time calls it reuses: its reranker's time is theirs.
func (r *run) shippedConfig() config {
	cfg := r.opts.Route
	cfg.Retrieval.MaxFragments = eval.TopK
	s := assembly.NewSearcher(cfg, r.parts(r.index, staticEmbedder(r.vectors), noCache{}))
	return config{name: RouteShipped, search: func(ctx context.Context, q eval.Question) (eval.Outcome, error) {
		found, err := s.Search(ctx, q.Question, []string{"public"})
		return fragmentOutcome(found), err
	}}
}

// parts are the evaluation's backends for the route's assembly.
func (r *run) parts(index retrieval.Index, embedder knowledge.Embedder, cache retrieval.Cache) assembly.Parts {
	return assembly.Parts{Index: index, Embedder: embedder, Cache: cache, Secrets: r.opts.Secrets,
		Generation: assembly.FixedGeneration{Background: &r.background},
		// One answer per request body: the sweeps reuse the rows' scores.
		RerankHTTP: &http.Client{Transport: r.rerankCache, Timeout: rerankTimeout}}
}

// searcher is the route's search body as cfg sets it over index, its
// candidates ordered by order (nil: as cfg says).
func (r *run) searcher(cfg podconfig.RouteConfig, order retrieval.Reranker, index retrieval.Index, embedder knowledge.Embedder) *retrieval.Searcher {
	p := r.parts(index, embedder, noCache{})
	p.Reranker = order
	return assembly.NewSearcher(cfg, p)
}

func fragmentOutcome(r retrieval.Retrieval) eval.Outcome {
	units := make([]eval.Unit, len(r.Fragments))
	for i, f := range r.Fragments {
		units[i] = eval.Unit{Source: f.Source, Text: f.Text, HeadingPath: f.HeadingPath}
	}
	return eval.Outcome{Units: units, NotFound: len(r.Fragments) == 0, Confidence: r.Confidence}
}

// timeRouteBody measures the default route body as a turn runs it, one
// search at a time against Milvus, the question embedded by the embedder:
// the eval's own searches share precomputed rankings.
func (r *run) timeRouteBody(ctx context.Context, outcomes []eval.Outcome) error {
	s := r.searcher(r.fusionRoute(nil), nil, r.tree, r.query)
	for i, q := range r.questions {
		start := time.Now()
		if _, err := s.Search(ctx, q.Question, []string{"public"}); err != nil {
			return err
		}
		outcomes[i].Elapsed = time.Since(start)
	}
	return nil
}

// staticEmbedder answers with the questions' vectors, embedded once.
type staticEmbedder map[string][]float32

func (e staticEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e[t]
	}
	return out, nil
}

// noCache never hits: every configuration searches.
type noCache struct{}

func (noCache) Get(context.Context, string) ([]retrieval.Fragment, bool) { return nil, false }
func (noCache) Put(context.Context, string, []retrieval.Fragment)        {}

// routeName names the route evaluated, as kubectl would.
func routeName(cfg podconfig.RouteConfig) string {
	return cfg.Route.Namespace + "/" + cfg.Route.Name
}
