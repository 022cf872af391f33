package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
)

// swappableIndex serves one generation at a time and counts the searches
// that reach it.
type swappableIndex struct {
	gen      atomic.Pointer[knowledge.Generation]
	searches atomic.Int64
}

func (x *swappableIndex) Active(context.Context) (knowledge.Generation, bool, error) {
	return *x.gen.Load(), true, nil
}

func (x *swappableIndex) HybridSearch(context.Context, knowledge.SearchRequest) ([]knowledge.Hit, error) {
	x.searches.Add(1)
	return []knowledge.Hit{{Score: 0.06, Similarity: 0.8, Row: knowledge.Row{ID: "waves-1", DocID: "waves", Source: "waves.md",
		Kind: "prose", Text: "Lower sync waves are applied first.", PartCount: 1, ContentHash: "h1"}}}, nil
}

func (x *swappableIndex) Parts(context.Context, []string, []string) (map[string][]knowledge.Row, error) {
	return map[string][]knowledge.Row{}, nil
}

func (x *swappableIndex) Current(context.Context, []string, []string, []string) ([]knowledge.RowVersion, error) {
	return nil, nil
}

// countingEmbedder counts the texts it is asked to embed.
type countingEmbedder struct {
	inner knowledge.Embedder
	calls atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	return c.inner.Embed(ctx, texts)
}

// A route whose store serves a generation built by another embedder
// refuses every search and turn with 503 embedder_mismatch naming both
// embedders, before anything is embedded or searched; once a generation of
// its own embedder swaps in, it serves again, without a restart.
func TestIndexOfAnotherEmbedderIsRefusedUntilOneOfTheRouteServes(t *testing.T) {
	minilm := knowledge.EmbedderInfo{Model: "all-MiniLM-L6-v2", Dimensions: 8}
	e5 := knowledge.EmbedderInfo{Model: "e5-small", Dimensions: 8, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	index := &swappableIndex{}
	index.gen.Store(&knowledge.Generation{Number: 3, Collection: "docs_g3", Embedder: "fp-minilm", EmbedderInfo: &minilm})
	watch := &retrieval.GenerationWatch{Index: index, Embedder: e5}
	if _, err := watch.Read(context.Background()); err == nil {
		t.Fatal("the watch reads a generation of another embedder as this route's")
	}
	embedder := &countingEmbedder{inner: &testenv.HashEmbedder{Dim: 8}}
	// No model: a turn would search, then quote.
	cfg := routetest.Config(8192)
	cfg.Model = podconfig.ChatModel{SearchPolicy: podconfig.SearchAlways}
	cfg.Answer.Mode, cfg.Retrieval.MaxFragments = podconfig.AnswerExtractive, 3
	parts := assembly.Parts{Index: index, Embedder: embedder, Generation: watch}
	searcher := assembly.NewSearcher(cfg, parts)
	runner, err := assembly.NewEngine(cfg, searcher, parts)
	if err != nil {
		t.Fatal(err)
	}
	srv := serveBare(t, func(o *Options) { o.Searcher, o.Engine = searcher, runner })

	for _, path := range []string{"/v1/search", "/v1/turns", "/v1/chat/completions"} {
		body := `{"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`
		switch path {
		case "/v1/search":
			body = searchBody
		case "/v1/chat/completions":
			body = `{"model":"docs","messages":[{"role":"user","content":"How are sync waves ordered?"}]}`
		}
		resp := do(t, "POST", srv.URL+path, "ann", body)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got openAIError
		_ = json.Unmarshal(raw, &got)
		if resp.StatusCode != http.StatusServiceUnavailable || got.Error.Code != turn.CodeEmbedderMismatch {
			t.Errorf("%s over an index of another embedder: %d %s, want 503 %s", path, resp.StatusCode, raw, turn.CodeEmbedderMismatch)
			continue
		}
		for _, name := range []string{`"all-MiniLM-L6-v2" (8 dimensions`, `"e5-small" (8 dimensions, query prefix "query: "`, "generation 3"} {
			if !strings.Contains(got.Error.Message, name) {
				t.Errorf("%s: the refusal %q does not name %s", path, got.Error.Message, name)
			}
		}
		if resp.Header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s: an SDK is not told that retrying now cannot help", path)
		}
	}
	if n, e := index.searches.Load(), embedder.calls.Load(); n != 0 || e != 0 {
		t.Fatalf("refused requests still made %d searches and %d embed calls", n, e)
	}

	// An ingestion with the route's embedder swaps in generation 4.
	index.gen.Store(&knowledge.Generation{Number: 4, Collection: "docs_g4", Embedder: "fp-e5", EmbedderInfo: &e5})
	if ok, err := watch.Read(context.Background()); !ok || err != nil {
		t.Fatalf("generation of the route's embedder: served %v, %v", ok, err)
	}
	resp := do(t, "POST", srv.URL+"/v1/search", "ann", searchBody)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || index.searches.Load() != 1 || !strings.Contains(string(raw), "waves-1") {
		t.Fatalf("after the swap: %d %s (%d searches), want the search served", resp.StatusCode, raw, index.searches.Load())
	}

	// A generation that names no embedder (built before ingestions
	// recorded it) is not blocked: unknown is not a mismatch.
	index.gen.Store(&knowledge.Generation{Number: 5, Collection: "docs_g5", Embedder: "fp-minilm"})
	if ok, err := watch.Read(context.Background()); !ok || err != nil {
		t.Errorf("generation that names no embedder: served %v, %v; want it served", ok, err)
	}
}
