package retrieval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
)

// Index is the part of the knowledge store a route searches.
type Index interface {
	HybridSearch(ctx context.Context, req knowledge.SearchRequest) ([]knowledge.Hit, error)
	// Parts returns the parts principals may see of each split section, in
	// order, keyed by parent id.
	Parts(ctx context.Context, parentIDs []string, principals []string) (map[string][]knowledge.Row, error)
	// Current returns the versions of the rows principals may read now
	// among ids and the parts of parentIDs (the cache's check on a hit).
	Current(ctx context.Context, ids, parentIDs []string, principals []string) ([]knowledge.RowVersion, error)
}

// SearchSettings are the route's retrieval settings.
type SearchSettings struct {
	Primitives []knowledge.Primitive
	// Weights of the primitives in the fusion; nil weighs all alike.
	Weights         map[knowledge.Primitive]float64
	Candidates      int
	RRFK            int
	SimilarityFloor float64
	StrictFloor     float64
	MaxFragments    int
	// MinConfidence, when set, answers not-found (no fragments) for a
	// search whose confidence score is below it: an on-topic question the
	// knowledge does not answer. It needs a recorded background.
	MinConfidence *float64
	Diversity     Diversity
}

// Searcher is the body of search_knowledge.
type Searcher struct {
	Index      Index
	Embedder   knowledge.Embedder
	Reranker   Reranker
	Cache      Cache
	Settings   SearchSettings
	Generation func() int64
	// Floors, when set, gives the similarity and strict floors in force,
	// in place of Settings' raw ones: a route with floors relative to the
	// embedder's background similarity resolves them per generation.
	Floors func() (similarity, strict float64)
	// Background, when set, is the serving generation's background
	// similarity, for the confidence score (nil: none recorded).
	Background func() *knowledge.Background
	// Timeouts bound each I/O step of a search; zero takes the defaults.
	Timeouts Timeouts
	// Slots, when set, bound the replica's knowledge-store calls in
	// flight (limits.maxSearchesInFlight); nil leaves them unbounded.
	Slots *StoreSlots
	// IndexMismatch, when set, says whether the serving generation was
	// built by another embedder than Embedder, or another keyword analyzer
	// than the Index's (GenerationWatch.Mismatch): while it returns an
	// error, every search fails with it before anything is looked up,
	// embedded or searched.
	IndexMismatch func() error
}

// CheckIndex is the *EmbedderMismatchError or *AnalyzerMismatchError that
// refuses searches now, or nil: the API asks it before it admits a turn
// or a search.
func (s *Searcher) CheckIndex() error {
	if s.IndexMismatch == nil {
		return nil
	}
	return s.IndexMismatch()
}

// Default deadlines of a search's I/O steps (QueryRoute.spec.timeouts
// renders the same values).
const (
	DefaultEmbedTimeout  = 10 * time.Second
	DefaultSearchTimeout = 5 * time.Second
	DefaultRerankTimeout = 10 * time.Second
)

// DefaultMaxSearchesInFlight bounds a replica's knowledge-store calls in
// flight when the route's config leaves limits.maxSearchesInFlight at zero
// (QueryRoute.spec.limits renders the same number).
const DefaultMaxSearchesInFlight = 8

// Timeouts are the deadlines of a search's I/O steps, each apart from the
// turn's: a dead backend fails the search (knowledge_unavailable) at its
// step's deadline instead of holding the turn until the turn's limit.
// A zero field takes its default.
type Timeouts struct {
	// Embed bounds embedding the query.
	Embed time.Duration
	// Search bounds the Milvus hybrid search, and apart from it the
	// reassembly's lookup of split sections' parts.
	Search time.Duration
	// Rerank bounds the reranker (a cross-encoder's call).
	Rerank time.Duration
}

func (t Timeouts) embed() time.Duration  { return cmp.Or(t.Embed, DefaultEmbedTimeout) }
func (t Timeouts) search() time.Duration { return cmp.Or(t.Search, DefaultSearchTimeout) }
func (t Timeouts) rerank() time.Duration { return cmp.Or(t.Rerank, DefaultRerankTimeout) }

// step runs one I/O step of a search under its own deadline. A step that
// ran past it fails with an error saying which step and its deadline, the
// cause still context.DeadlineExceeded.
func step[T any](ctx context.Context, name string, timeout time.Duration, call func(context.Context) (T, error)) (T, error) {
	ctx, span := stepSpan(ctx, name)
	defer span.End()
	stepCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := call(stepCtx)
	if err != nil && ctx.Err() == nil && stepCtx.Err() != nil {
		err = fmt.Errorf("%s ran past its %s deadline: %w", name, timeout, errors.Join(context.DeadlineExceeded, err))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "failed")
	}
	return out, err
}

// stepSpan starts a step's span (ragroute.search.<name>), with the tracer
// of the turn's span: without tracing it is a no-op.
func stepSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer(tracerName).Start(ctx, "ragroute.search."+strings.ReplaceAll(name, " ", "_"))
}

// tracerName names the search's spans' instrumentation scope.
const tracerName = "github.com/ragroute/ragroute/internal/route/retrieval"

// floors are the similarity and strict floors this search applies.
func (s *Searcher) floors() (similarity, strict float64) {
	if s.Floors != nil {
		return s.Floors()
	}
	return s.Settings.SimilarityFloor, s.Settings.StrictFloor
}

// admit holds a search until a shared embedder lets its turn in
// (model.Admitter): behind the checks of the answers streaming, paced by
// what they cost. Like a wait for a store slot, the wait comes before
// the embed step's deadline starts and is bounded by the turn's own
// context: a busy check delays a turn, it never fails its search. A
// search the cache served waits too: it costs the embedder nothing to
// start, but its answer's check later. The wait is the embed_queue stage.
func (s *Searcher) admit(ctx context.Context, timings map[string]time.Duration) error {
	admitter, ok := s.Embedder.(model.Admitter)
	if !ok {
		return nil
	}
	ctx, span := stepSpan(ctx, "embed queue")
	defer span.End()
	start := time.Now()
	if err := admitter.Admit(ctx); err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "failed")
		return fmt.Errorf("wait for the embedder: %w", context.Cause(ctx))
	}
	timings["embed_queue"] = time.Since(start)
	return nil
}

// confidence reads the search's confidence, scored when the serving
// generation has a background.
func (s *Searcher) confidence(query string, hits []knowledge.Hit) Confidence {
	c := confidenceOf(query, hits)
	if s.Background != nil {
		if b := s.Background(); b != nil {
			c = c.scored(*b)
		}
	}
	return c
}

// tooUnsure applies retrieval.minConfidence.
func (s *Searcher) tooUnsure(c Confidence) bool {
	floor := s.Settings.MinConfidence
	return floor != nil && c.Score != nil && *c.Score < *floor
}

// Retrieval is what one search found, and how.
type Retrieval struct {
	Query     string
	Intent    Intent
	Fragments []Fragment
	// Confidence says how sure the search is that the knowledge answers
	// the query (not set on a cache hit).
	Confidence Confidence
	CacheHit   bool
	Timings    map[string]time.Duration
}

// Search runs the tool body for one self-contained query on behalf of
// principals. No principals, no search: the ACL filter never goes away.
func (s *Searcher) Search(ctx context.Context, query string, principals []string) (Retrieval, error) {
	r := Retrieval{Query: query, Intent: ClassifyIntent(query), Timings: map[string]time.Duration{}}
	if len(principals) == 0 {
		return r, fmt.Errorf("search without an identity is refused")
	}
	if err := s.CheckIndex(); err != nil {
		return r, err // the cache too: a question answers alike cached or not
	}
	// queued is the search's wait for store slots, apart from the steps'
	// own times: a figure of the replica's load, not of the store's speed.
	var queued time.Duration
	key := cacheKey(query, principals, s.Generation())
	if cached, ok := s.cached(ctx, key); ok && s.stillServed(ctx, cached, principals, &queued) {
		r.Fragments, r.CacheHit = cached, true
		r.Timings["store_queue"] = queued
		return r, s.admit(ctx, r.Timings)
	}

	if err := s.admit(ctx, r.Timings); err != nil {
		return r, err
	}
	start := time.Now()
	vectors, err := step(ctx, "embed", s.Timeouts.embed(), func(ctx context.Context) ([][]float32, error) {
		return s.Embedder.Embed(ctx, []string{query})
	})
	if err != nil {
		return r, fmt.Errorf("embed the query: %w", err)
	}
	r.Timings["embed"] = time.Since(start)

	// A store step's timing is its own, its wait for a slot apart.
	start, waited := time.Now(), queued
	hits, err := storeStep(ctx, s, "hybrid search", &queued, func(ctx context.Context) ([]knowledge.Hit, error) {
		return s.Index.HybridSearch(ctx, knowledge.SearchRequest{
			Query: query, Vector: vectors[0], Principals: principals, Primitives: s.Settings.Primitives,
			Weights: s.Settings.Weights, Candidates: s.Settings.Candidates, RRFK: s.Settings.RRFK,
		})
	})
	if err != nil {
		return r, err
	}
	r.Timings["retrieve"] = time.Since(start) - (queued - waited)
	if r.Confidence = s.confidence(query, hits); s.tooUnsure(r.Confidence) {
		hits = nil // an on-topic gap: nothing for the model to answer from
	}

	start = time.Now()
	similarityFloor, strictFloor := s.floors()
	candidates := aboveFloor(hits, similarityFloor)
	if candidates, err = step(ctx, "rerank", s.Timeouts.rerank(), func(ctx context.Context) ([]Fragment, error) {
		return s.Reranker.Rerank(ctx, query, candidates)
	}); err != nil {
		return r, fmt.Errorf("rerank: %w", err)
	}
	candidates = strictFilter(candidates, strictFloor)
	candidates = preferKind(candidates, r.Intent)
	candidates = s.Settings.Diversity.apply(candidates)
	if len(candidates) > s.Settings.MaxFragments {
		candidates = candidates[:s.Settings.MaxFragments]
	}
	r.Timings["rerank"] = time.Since(start)

	start, waited = time.Now(), queued
	if candidates, err = s.reassemble(ctx, candidates, principals, &queued); err != nil {
		return r, err
	}
	r.Timings["reassemble"] = time.Since(start) - (queued - waited)
	r.Timings["store_queue"] = queued
	r.Fragments = candidates
	s.Cache.Put(ctx, key, candidates)
	return r, nil
}

// cached looks the search up in the exact cache, under its own span.
func (s *Searcher) cached(ctx context.Context, key string) ([]Fragment, bool) {
	ctx, span := stepSpan(ctx, "cache")
	defer span.End()
	fragments, ok := s.Cache.Get(ctx, key)
	span.SetAttributes(attribute.Bool("ragroute.cache_hit", ok))
	return fragments, ok
}

// aboveFloor turns hits into fragments, in the fused order, scored by
// their similarity to the question, keeping those at or above floor. The
// fused RRF score ranks but cannot tell an unrelated question: the first
// of a poor list still scores high.
func aboveFloor(hits []knowledge.Hit, floor float64) []Fragment {
	var out []Fragment
	for _, h := range hits {
		if score := float64(h.Similarity); score >= floor {
			out = append(out, fragmentOf(h.Row, score))
		}
	}
	return out
}

func strictFilter(fragments []Fragment, floor float64) []Fragment {
	var out []Fragment
	for _, f := range fragments {
		if f.Score >= floor {
			out = append(out, f)
		}
	}
	return out
}

// preferKind moves fragments describing a screen ahead for a screen
// question, right after the best candidate. A concept question keeps the
// fused order, strong screen fragments included. The classifier is a rule
// set: a screen question whose best answer is a concept section must not
// lose it to a weaker screen one.
func preferKind(fragments []Fragment, intent Intent) []Fragment {
	if intent != IntentScreen || len(fragments) == 0 {
		return fragments
	}
	rest := fragments[1:]
	sort.SliceStable(rest, func(i, j int) bool {
		return rest[i].Kind == string(IntentScreen) && rest[j].Kind != string(IntentScreen)
	})
	return fragments
}
