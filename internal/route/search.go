package route

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// Index is the part of the knowledge store a route searches.
type Index interface {
	HybridSearch(ctx context.Context, req knowledge.SearchRequest) ([]knowledge.Hit, error)
	Parts(ctx context.Context, parentID string, principals []string) ([]knowledge.Row, error)
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

// Reranker orders candidates that passed the similarity floor. The v1
// route keeps the fused order; a cross-encoder plugs in here.
type Reranker interface {
	Rerank(ctx context.Context, query string, fragments []Fragment) ([]Fragment, error)
}

// KeepOrder is the v1 reranker: the RRF order stands.
type KeepOrder struct{}

// Rerank returns fragments unchanged.
func (KeepOrder) Rerank(_ context.Context, _ string, fragments []Fragment) ([]Fragment, error) {
	return fragments, nil
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

// reassemble replaces a part of a split section by the whole section, its
// parts in order with the overlap between them removed.
func (s *Searcher) reassemble(ctx context.Context, fragments []Fragment, principals []string) ([]Fragment, error) {
	for i, f := range fragments {
		if f.PartCount <= 1 || f.ParentID == "" {
			continue
		}
		parts, err := s.Index.Parts(ctx, f.ParentID, principals)
		if err != nil {
			return nil, fmt.Errorf("reassemble %s: %w", f.Source, err)
		}
		if len(parts) < 2 {
			continue
		}
		texts := make([]string, len(parts))
		for j, p := range parts {
			texts[j] = p.Text
		}
		fragments[i].Text = joinParts(texts)
		fragments[i].Reassembled = true
		fragments[i].ID = f.ParentID
	}
	return fragments, nil
}

// joinParts concatenates parts, dropping each part's leading overlap (the
// longest prefix that repeats the previous part's end).
func joinParts(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			p = strings.TrimLeft(p[overlapLen(parts[i-1], p):], " \n")
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}

// overlapLen is the length of the longest prefix of next that is a suffix
// of prev, counted at word boundaries.
func overlapLen(prev, next string) int {
	best := 0
	for i := 1; i <= len(next) && i <= len(prev) && i <= 2000; i++ {
		if (i == len(next) || next[i] == ' ' || next[i] == '\n') && strings.HasSuffix(prev, next[:i]) {
			best = i
		}
	}
	return best
}
