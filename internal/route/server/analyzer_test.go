package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
)

// A route whose store serves a generation whose keyword index another
// analyzer built (spec.search.lexical.languages changed, the ingestion
// not done yet) refuses searches with 503 analyzer_mismatch naming both
// analyzers, before anything is embedded or searched; a generation of
// its own analyzer serves again, and one that names none (built before
// ragroute analyzed text) is not blocked.
func TestIndexOfAnotherAnalyzerIsRefusedUntilOneOfTheRouteServes(t *testing.T) {
	const stemmed, plain = "snowball:russian+english/v1", "none"
	index := &swappableIndex{}
	index.gen.Store(&knowledge.Generation{Number: 3, Collection: "docs_g3", Analyzer: plain})
	watch := &retrieval.GenerationWatch{Index: index, Analyzer: stemmed}
	embedder := &countingEmbedder{inner: &testenv.HashEmbedder{Dim: 8}}
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
	if _, err := watch.Read(context.Background()); err == nil {
		t.Fatal("the watch reads a generation of another analyzer as this route's")
	}

	for _, path := range []string{"/v1/search", "/v1/turns"} {
		body := searchBody
		if path == "/v1/turns" {
			body = `{"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`
		}
		resp := do(t, "POST", srv.URL+path, "ann", body)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got openAIError
		_ = json.Unmarshal(raw, &got)
		if resp.StatusCode != http.StatusServiceUnavailable || got.Error.Code != turn.CodeAnalyzerMismatch {
			t.Errorf("%s over an index of another analyzer: %d %s, want 503 %s", path, resp.StatusCode, raw, turn.CodeAnalyzerMismatch)
			continue
		}
		for _, name := range []string{`"none"`, `"snowball:russian+english/v1"`, "generation 3"} {
			if !strings.Contains(got.Error.Message, name) {
				t.Errorf("%s: the refusal %q does not name %s", path, got.Error.Message, name)
			}
		}
	}
	if n, e := index.searches.Load(), embedder.calls.Load(); n != 0 || e != 0 {
		t.Fatalf("refused requests still made %d searches and %d embed calls", n, e)
	}

	for _, gen := range []knowledge.Generation{{Number: 4, Collection: "docs_g4", Analyzer: stemmed}, {Number: 5, Collection: "docs_g5"}} {
		index.gen.Store(&gen)
		if ok, err := watch.Read(context.Background()); !ok || err != nil {
			t.Fatalf("generation %d (analyzer %q): served %v, %v", gen.Number, gen.Analyzer, ok, err)
		}
		before := index.searches.Load()
		resp := do(t, "POST", srv.URL+"/v1/search", "ann", searchBody)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || index.searches.Load() != before+1 {
			t.Errorf("generation %d (analyzer %q): %d, want the search served", gen.Number, gen.Analyzer, resp.StatusCode)
		}
	}
}
