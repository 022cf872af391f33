package ingestion

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// recording embeds with the hash embedder and keeps every text it was sent.
type recording struct {
	mu    sync.Mutex
	hash  testenv.HashEmbedder
	texts []string
}

func (r *recording) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts = append(r.texts, texts...)
	return r.hash.Embed(ctx, texts)
}

func (r *recording) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.texts
	r.texts = nil
	return out
}

type quiet struct{}

func (quiet) Read(int, int)                 {}
func (quiet) Synced(knowledge.SyncProgress) {}

// TestPrefixChangeReEmbedsIntoANewGeneration: input prefixes are part of
// the embedder's fingerprint, so changing one builds the next generation
// (every chunk embedded behind the new document prefix, the background
// measured with the new query prefix) and swaps the alias to it; without
// prefixes nothing changes.
func TestPrefixChangeReEmbedsIntoANewGeneration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	uri := milvus.Get(t).URI
	docs := t.TempDir()
	for _, name := range []string{"nested-headings.md", "long-table.md", "ui-screen.md"} {
		data, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	client, err := knowledge.Connect(ctx, knowledge.Connection{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close(context.Background()) }()
	const dim = 32
	cfg := podconfig.IngestConfig{
		Version: podconfig.IngestVersion, Store: "docs",
		Milvus:    podconfig.Milvus{URI: uri, Collection: "prefixes"},
		Embedding: podconfig.Embedding{BaseURL: "http://embedder/v1", Model: "hash", Dimensions: dim, MaxInputTokens: 256},
		Chunking:  podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources:   []podconfig.Source{{Name: "handbook", Path: docs, Principals: []string{"group:staff"}}},
	}
	store := knowledge.NewStore(client, cfg.Milvus.Collection, dim)
	documents, queries := &recording{hash: testenv.HashEmbedder{Dim: dim}}, &recording{hash: testenv.HashEmbedder{Dim: dim}}
	run := func() Summary {
		t.Helper()
		e := cfg.Embedding
		summary, err := Run(ctx, cfg, Target{Store: store,
			Embedder:      model.WithPrefix(documents, e.DocumentPrefix, int(e.MaxInputTokens), tokenize.NewInputCounter()),
			QueryEmbedder: model.WithPrefix(queries, e.QueryPrefix, int(e.MaxInputTokens), tokenize.NewInputCounter()),
		}, quiet{})
		if err != nil {
			t.Fatal(err)
		}
		return summary
	}
	allStartWith := func(what string, texts []string, prefix string) {
		t.Helper()
		if len(texts) == 0 {
			t.Errorf("no %s were embedded", what)
		}
		for _, text := range texts {
			if !strings.HasPrefix(text, prefix) || (prefix == "" && strings.HasPrefix(text, "passage: ")) {
				t.Errorf("%s embedded as %q, want the prefix %q", what, text, prefix)
				return
			}
		}
	}
	serving := func() knowledge.Generation {
		t.Helper()
		gen, ok, err := store.Active(ctx)
		if err != nil || !ok {
			t.Fatalf("no generation serves the alias (%v)", err)
		}
		return gen
	}

	first := run()
	if r := first.Result; !r.NewGeneration || r.Generation.Number != 1 || r.Background == nil {
		t.Fatalf("first run: %+v", r)
	}
	allStartWith("chunks", documents.take(), "")
	queries.take()

	second := run()
	if r := second.Result; r.NewGeneration || r.Written != 0 || second.Fingerprint != first.Fingerprint {
		t.Fatalf("a rerun without prefixes rebuilt or rewrote: %+v", r)
	}
	if texts := documents.take(); len(texts) != 0 {
		t.Fatalf("a rerun embedded %d texts", len(texts))
	}

	// e5's prefixes: a new vector space, so a new generation.
	cfg.Embedding.QueryPrefix, cfg.Embedding.DocumentPrefix = "query: ", "passage: "
	third := run()
	r := third.Result
	if !r.NewGeneration || r.Generation.Number != 2 || r.Written != first.Chunks || third.Fingerprint == first.Fingerprint {
		t.Fatalf("prefix change: %+v (fingerprint %s), want generation 2 with all %d chunks re-embedded", r, third.Fingerprint, first.Chunks)
	}
	allStartWith("chunk texts and titles", documents.take(), "passage: ")
	allStartWith("background titles", queries.take(), "query: ")
	gen := serving()
	if gen.Collection != "prefixes_g2" || gen.Embedder != third.Fingerprint || gen.Background == nil || *gen.Background != *r.Background {
		t.Errorf("the alias serves %+v, want generation 2 with its background %+v", gen, r.Background)
	}
	named := knowledge.EmbedderInfo{Model: cfg.Embedding.Model, Dimensions: int(cfg.Embedding.Dimensions), QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	if gen.EmbedderInfo == nil || *gen.EmbedderInfo != named {
		t.Errorf("generation 2 names its embedder %v, want %v", gen.EmbedderInfo, named)
	}
	if exists, _ := client.HasCollection(ctx, milvusclient.NewHasCollectionOption("prefixes_g1")); exists {
		t.Error("the replaced generation prefixes_g1 was not dropped")
	}

	// The query prefix alone is part of the fingerprint too.
	cfg.Embedding.QueryPrefix = "search_query: "
	fourth := run()
	if r := fourth.Result; !r.NewGeneration || r.Generation.Number != 3 || serving().Collection != "prefixes_g3" {
		t.Errorf("query prefix change: %+v, want generation 3 serving", r)
	}
	allStartWith("background titles", queries.take(), "search_query: ")
}
