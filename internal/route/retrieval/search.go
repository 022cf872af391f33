package retrieval

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// Index is the part of the knowledge store a route searches.
type Index interface {
	HybridSearch(ctx context.Context, req knowledge.SearchRequest) ([]knowledge.Hit, error)
	// Parts returns the parts principals may see of each split section, in
	// order, keyed by parent id.
	Parts(ctx context.Context, parentIDs []string, principals []string) (map[string][]knowledge.Row, error)
}

// SearchSettings are the route's retrieval settings.
type SearchSettings struct {
	Primitives      []knowledge.Primitive
	Candidates      int
	RRFK            int
	SimilarityFloor float64
	StrictFloor     float64
	MaxFragments    int
}

// Searcher is the body of search_knowledge.
type Searcher struct {
	Index      Index
	Embedder   knowledge.Embedder
	Reranker   Reranker
	Cache      Cache
	Settings   SearchSettings
	Generation func() int64
}

// Retrieval is what one search found, and how.
type Retrieval struct {
	Query     string
	Intent    Intent
	Fragments []Fragment
	CacheHit  bool
	Timings   map[string]time.Duration
}

// Search runs the tool body for one self-contained query on behalf of
// principals. No principals, no search: the ACL filter never goes away.
func (s *Searcher) Search(ctx context.Context, query string, principals []string) (Retrieval, error) {
	r := Retrieval{Query: query, Intent: ClassifyIntent(query), Timings: map[string]time.Duration{}}
	if len(principals) == 0 {
		return r, fmt.Errorf("search without an identity is refused")
	}
	key := cacheKey(query, principals, s.Generation())
	if cached, ok := s.Cache.Get(key); ok {
		r.Fragments, r.CacheHit = cached, true
		return r, nil
	}

	start := time.Now()
	vectors, err := s.Embedder.Embed(ctx, []string{query})
	if err != nil {
		return r, fmt.Errorf("embed the query: %w", err)
	}
	r.Timings["embed"] = time.Since(start)

	start = time.Now()
	hits, err := s.Index.HybridSearch(ctx, knowledge.SearchRequest{
		Query: query, Vector: vectors[0], Principals: principals, Primitives: s.Settings.Primitives,
		Candidates: s.Settings.Candidates, RRFK: s.Settings.RRFK,
	})
	if err != nil {
		return r, err
	}
	r.Timings["retrieve"] = time.Since(start)

	start = time.Now()
	candidates := aboveFloor(hits, s.Settings.SimilarityFloor)
	if candidates, err = s.Reranker.Rerank(ctx, query, candidates); err != nil {
		return r, fmt.Errorf("rerank: %w", err)
	}
	candidates = strictFilter(candidates, s.Settings.StrictFloor)
	candidates = preferKind(candidates, r.Intent)
	candidates = bestPerDocument(candidates)
	if len(candidates) > s.Settings.MaxFragments {
		candidates = candidates[:s.Settings.MaxFragments]
	}
	r.Timings["rerank"] = time.Since(start)

	start = time.Now()
	if candidates, err = s.reassemble(ctx, candidates, principals); err != nil {
		return r, err
	}
	r.Timings["reassemble"] = time.Since(start)
	r.Fragments = candidates
	s.Cache.Put(key, candidates)
	return r, nil
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
// question. A concept question keeps the fused order, strong screen
// fragments included.
func preferKind(fragments []Fragment, intent Intent) []Fragment {
	if intent != IntentScreen {
		return fragments
	}
	sort.SliceStable(fragments, func(i, j int) bool {
		return fragments[i].Kind == string(IntentScreen) && fragments[j].Kind != string(IntentScreen)
	})
	return fragments
}

// bestPerDocument keeps the best fragment of each document: diversity over
// completeness.
func bestPerDocument(fragments []Fragment) []Fragment {
	seen := map[string]bool{}
	var out []Fragment
	for _, f := range fragments {
		if !seen[f.DocID] {
			seen[f.DocID] = true
			out = append(out, f)
		}
	}
	return out
}
