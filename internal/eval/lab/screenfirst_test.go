package lab

import (
	"context"
	"testing"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/testenv"
)

// fixedHits is an index that answers every search with the same hits.
type fixedHits []knowledge.Hit

func (h fixedHits) HybridSearch(context.Context, knowledge.SearchRequest) ([]knowledge.Hit, error) {
	return h, nil
}

func (fixedHits) Parts(context.Context, []string, []string) (map[string][]knowledge.Row, error) {
	return map[string][]knowledge.Row{}, nil
}

func (fixedHits) Current(context.Context, []string, []string, []string) ([]knowledge.RowVersion, error) {
	return nil, nil
}

// rankedHit is the hit ranked rank of document doc; similarity falls
// with the rank.
func rankedHit(id, doc string, rank int, kind string) knowledge.Hit {
	return knowledge.Hit{Score: float32(4.0 / float64(60+rank)), Similarity: 0.8 - 0.05*float32(rank),
		Row: knowledge.Row{ID: id, DocID: doc, Source: doc + ".md", Kind: kind, Text: id, PartCount: 1, ContentHash: "hash-" + id}}
}

// The route keeps a screen question's best candidate first and puts the
// screen fragment right after it; route-v1's own step (screenFirst)
// puts it first, through the route's assembled search body.
func TestScreenFirstIsRouteV1sOrder(t *testing.T) {
	index := fixedHits{rankedHit("a1", "a", 1, "prose"), rankedHit("a2", "a", 2, "prose"), rankedHit("b1", "b", 3, "screen"),
		rankedHit("c1", "c", 4, "prose"), rankedHit("d1", "d", 5, "prose")}
	cfg := podconfig.RouteConfig{
		Store:     podconfig.Store{Search: podconfig.Search{Candidates: 10, RRFK: 60}},
		Retrieval: podconfig.Retrieval{SimilarityFloor: 0.2, StrictFloor: 0.35, MaxFragments: 3},
	}
	search := func(order retrieval.Reranker, query string) []string {
		s := assembly.NewSearcher(cfg, assembly.Parts{Index: index, Embedder: &testenv.HashEmbedder{Dim: 8}, Cache: noCache{}, Reranker: order})
		r, err := s.Search(context.Background(), query, []string{"group:staff"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, f := range r.Fragments {
			ids = append(ids, f.ID)
		}
		return ids
	}
	const screen = "where is the sync button on the page"
	if got := search(nil, screen); len(got) < 2 || got[0] != "a1" || got[1] != "b1" {
		t.Errorf("the route: fragments %v, want a1 then b1", got)
	}
	if got := search(screenFirst{}, screen); len(got) == 0 || got[0] != "b1" {
		t.Errorf("screen first: fragments %v, want b1 first", got)
	}
	if got := search(screenFirst{}, "how does it work"); len(got) == 0 || got[0] != "a1" {
		t.Errorf("screen first, a concept question: fragments %v, want the fused order", got)
	}
}
