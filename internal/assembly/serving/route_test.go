package serving

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/server"
)

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
	chat := assembly.Chat(podconfig.ChatModel{BaseURL: "http://m/v1", Name: "m"}, env)
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
	if got := names(upstreamRetries(chat, assembly.NewSearcher(cfg, assembly.Parts{Secrets: env, Generation: watch, Logger: logger}))); got != "chat,embedder,reranker" {
		t.Errorf("with a prefixed embedder and a cross-encoder: %s", got)
	}
	cfg.Rerank = podconfig.Rerank{Mode: podconfig.RerankRRF}
	if got := names(upstreamRetries(chat, assembly.NewSearcher(cfg, assembly.Parts{Secrets: env, Generation: watch, Logger: logger}))); got != "chat,embedder" {
		t.Errorf("without a reranker: %s", got)
	}
}

// servingIndex says which generation serves the alias.
type servingIndex struct{ gen knowledge.Generation }

func (s *servingIndex) Active(context.Context) (knowledge.Generation, bool, error) {
	return s.gen, true, nil
}

// The route is not ready while the serving generation was built by
// another embedder than its config names (the Deployment keeps old pods
// serving meanwhile), and ready again as soon as a readiness check sees a
// generation of its own embedder: each check reads the serving generation.
func TestReadinessFollowsTheServingGenerationsEmbedder(t *testing.T) {
	e5 := podconfig.Embedding{BaseURL: "http://e/v1", Model: "e5-small", Dimensions: 8, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	minilm := assembly.EmbedderInfo(podconfig.Embedding{BaseURL: "http://e/v1", Model: "all-MiniLM-L6-v2", Dimensions: 8})
	index := &servingIndex{gen: knowledge.Generation{Number: 3, Collection: "docs_g3", EmbedderInfo: &minilm}}
	watch := &retrieval.GenerationWatch{Index: index, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Embedder: assembly.EmbedderInfo(e5)}
	var notReady *server.NotReadyError
	if err := indexServes(context.Background(), watch); !errors.As(err, &notReady) || notReady.Dependency != "embedder" {
		t.Fatalf("generation of another embedder: readiness %v, want not ready on the embedder", err)
	}
	if err := watch.Mismatch(); err == nil || !strings.Contains(err.Error(), `"e5-small"`) {
		t.Errorf("the route's refusal %v does not name its embedder", err)
	}
	// Ingested by the route's embedder, reached at another address.
	e5.BaseURL = "http://embedder-proxy/v1"
	named := assembly.EmbedderInfo(e5)
	index.gen = knowledge.Generation{Number: 4, Collection: "docs_g4", EmbedderInfo: &named}
	if err := indexServes(context.Background(), watch); err != nil {
		t.Fatalf("generation of the route's embedder: readiness %v", err)
	}
	if err := watch.Mismatch(); err != nil || watch.Load() != 4 {
		t.Errorf("after the check, the watch holds generation %d (mismatch %v), want 4 served", watch.Load(), err)
	}
}
