package serving

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
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
	_, check := assembly.Checker(cfg, env, nil)
	if got := names(upstreamRetries(chat, assembly.NewSearcher(cfg, assembly.Parts{Secrets: env, Generation: watch, Logger: logger}), check)); got != "chat,embedder,reranker" {
		t.Errorf("with a prefixed embedder and a cross-encoder: %s", got)
	}
	cfg.Rerank = podconfig.Rerank{Mode: podconfig.RerankRRF}
	if got := names(upstreamRetries(chat, assembly.NewSearcher(cfg, assembly.Parts{Secrets: env, Generation: watch, Logger: logger}), check)); got != "chat,embedder" {
		t.Errorf("without a reranker: %s", got)
	}
}
