package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/api"
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
	searcher := newSearcher(cfg, nil, func(string) string { return "" }, nil, nil, watch, logger)
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
	if newSearcher(cfg, nil, func(string) string { return "" }, nil, nil, watch, logger).Floors != nil {
		t.Error("raw floors only, yet the searcher resolves them")
	}
}

// Every model client the route calls has its retries exported, the
// embedder behind an input prefix too; a reranker only when one is set.
func TestUpstreamRetriesCoverEachModelClient(t *testing.T) {
	env := func(string) string { return "" }
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := podconfig.RouteConfig{
		Store:  podconfig.Store{Embedding: podconfig.Embedding{BaseURL: "http://e/v1", Model: "e5", Dimensions: 8, QueryPrefix: "query: "}},
		Cache:  podconfig.Cache{Backend: podconfig.BackendMemory, MaxEntries: 10},
		Rerank: podconfig.Rerank{Mode: podconfig.RerankCrossEncoder, CrossEncoder: &podconfig.CrossEncoder{BaseURL: "http://r/v1", Model: "bge"}},
	}
	watch := &retrieval.GenerationWatch{Logger: logger}
	chat := newChat(podconfig.ChatModel{BaseURL: "http://m/v1", Name: "m"}, env)
	names := func(retries map[string]func() int64) string {
		var out []string
		for name, read := range retries {
			if read() != 0 {
				t.Errorf("%s starts at %d retries", name, read())
			}
			out = append(out, name)
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	_, check := newChecker(cfg, env, nil, nil)
	if got := names(upstreamRetries(chat, newSearcher(cfg, nil, env, nil, nil, watch, logger), check)); got != "chat,embedder,reranker" {
		t.Errorf("with a prefixed embedder and a cross-encoder: %s", got)
	}
	cfg.Rerank = podconfig.Rerank{Mode: podconfig.RerankRRF}
	if got := names(upstreamRetries(chat, newSearcher(cfg, nil, env, nil, nil, watch, logger), check)); got != "chat,embedder" {
		t.Errorf("without a reranker: %s", got)
	}
}

// The route is not ready while the serving generation was built by
// another embedder than its config names (the Deployment keeps old pods
// serving meanwhile), and ready again as soon as a readiness check sees a
// generation of its own embedder: each check reads the serving generation.
func TestReadinessFollowsTheServingGenerationsEmbedder(t *testing.T) {
	e5 := podconfig.Embedding{BaseURL: "http://e/v1", Model: "e5-small", Dimensions: 8, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	minilm := routeEmbedder(podconfig.Embedding{BaseURL: "http://e/v1", Model: "all-MiniLM-L6-v2", Dimensions: 8})
	index := &servingIndex{gen: knowledge.Generation{Number: 3, Collection: "docs_g3", EmbedderInfo: &minilm}}
	watch := &retrieval.GenerationWatch{Index: index, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Embedder: routeEmbedder(e5)}
	var notReady *api.NotReadyError
	if err := indexServes(context.Background(), watch); !errors.As(err, &notReady) || notReady.Dependency != "embedder" {
		t.Fatalf("generation of another embedder: readiness %v, want not ready on the embedder", err)
	}
	if err := watch.Mismatch(); err == nil || !strings.Contains(err.Error(), `"e5-small"`) {
		t.Errorf("the route's refusal %v does not name its embedder", err)
	}
	// Ingested by the route's embedder, reached at another address.
	e5.BaseURL = "http://embedder-proxy/v1"
	named := routeEmbedder(e5)
	index.gen = knowledge.Generation{Number: 4, Collection: "docs_g4", EmbedderInfo: &named}
	if err := indexServes(context.Background(), watch); err != nil {
		t.Fatalf("generation of the route's embedder: readiness %v", err)
	}
	if err := watch.Mismatch(); err != nil || watch.Load() != 4 {
		t.Errorf("after the check, the watch holds generation %d (mismatch %v), want 4 served", watch.Load(), err)
	}
}
