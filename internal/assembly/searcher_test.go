package assembly

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// servingIndex says which generation serves the alias.
type servingIndex struct{ gen knowledge.Generation }

func (s *servingIndex) Active(context.Context) (knowledge.Generation, bool, error) {
	return s.gen, true, nil
}

// refreshed reads the generation once, as the watch does at start.
func refreshed(t *testing.T, watch *retrieval.GenerationWatch) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	watch.Run(ctx, 1) // reads once, then sees ctx done
}

func TestSearcherFloorsFollowTheServingBackground(t *testing.T) {
	three, five := 3.0, 5.0
	cfg := podconfig.RouteConfig{
		Store:     podconfig.Store{Embedding: podconfig.Embedding{BaseURL: "http://e/v1", Model: "e5", Dimensions: 8, QueryPrefix: "query: "}},
		Retrieval: podconfig.Retrieval{SimilarityFloor: 0.2, SimilarityFloorSigmas: &three, StrictFloor: 0.35, StrictFloorSigmas: &five, MaxFragments: 6},
		Cache:     podconfig.Cache{Backend: podconfig.BackendMemory, MaxEntries: 10},
	}
	index := &servingIndex{gen: knowledge.Generation{Number: 1, Collection: "docs_g1"}}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	watch := &retrieval.GenerationWatch{Index: index, Logger: logger}
	searcher := NewSearcher(cfg, Parts{Generation: watch, Logger: logger})
	if searcher.Floors == nil {
		t.Fatal("relative floors configured, but the searcher has no Floors hook")
	}
	refreshed(t, watch)
	if s, st := searcher.Floors(); s != 0.2 || st != 0.35 {
		t.Errorf("no background recorded: floors %v %v, want the raw ones", s, st)
	}
	index.gen = knowledge.Generation{Number: 2, Collection: "docs_g2", Background: &knowledge.Background{Mean: 0.8, StdDev: 0.02, Samples: 500}}
	refreshed(t, watch)
	if s, st := searcher.Floors(); math.Abs(s-0.86) > 1e-9 || math.Abs(st-0.9) > 1e-9 {
		t.Errorf("background 0.8 ± 0.02: floors %v %v, want 0.86 and 0.9", s, st)
	}

	cfg.Retrieval.SimilarityFloorSigmas, cfg.Retrieval.StrictFloorSigmas = nil, nil
	if NewSearcher(cfg, Parts{Generation: watch, Logger: logger}).Floors != nil {
		t.Error("raw floors only, yet the searcher resolves them")
	}
}
