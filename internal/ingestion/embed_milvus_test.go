package ingestion

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

// fickle embeds with the hash embedder, except that batches over
// maxInputs hang (until 2s, or the call's deadline) and any batch with an
// input containing poison fails.
type fickle struct {
	hash      testenv.HashEmbedder
	maxInputs int
	poison    string
	mu        sync.Mutex
	sizes     []int
}

func (f *fickle) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.sizes = append(f.sizes, len(texts))
	f.mu.Unlock()
	if f.maxInputs > 0 && len(texts) > f.maxInputs {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("embeddings: %w", ctx.Err())
		case <-time.After(2 * time.Second):
			return nil, errors.New("embeddings: the server gave up on the batch")
		}
	}
	for _, text := range texts {
		if f.poison != "" && strings.Contains(text, f.poison) {
			return nil, errors.New("embeddings: 500 Internal Server Error")
		}
	}
	return f.hash.Embed(ctx, texts)
}

// ingestDocs runs an ingestion of the ingest test documents (plus extra,
// name → content) into a fresh collection with embedder.
func ingestDocs(ctx context.Context, t *testing.T, collection string, embedder knowledge.Embedder, extra map[string]string) (Summary, error) {
	t.Helper()
	docs := t.TempDir()
	for _, name := range []string{"nested-headings.md", "long-table.md", "long-procedure.md", "ui-screen.md"} {
		data, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range extra {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ingestDir(ctx, t, collection, docs, embedder)
}

// ingestDir runs an ingestion of the folder docs, one source of
// group:staff, into collection with embedder.
func ingestDir(ctx context.Context, t *testing.T, collection, docs string, embedder knowledge.Embedder) (Summary, error) {
	t.Helper()
	uri := milvus.Get(t).URI
	client, err := knowledge.Connect(ctx, knowledge.Connection{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(context.Background()) })
	const dim = 16
	cfg := podconfig.IngestConfig{
		Version: podconfig.IngestVersion, Store: "docs",
		Milvus:    podconfig.Milvus{URI: uri, Collection: collection},
		Embedding: podconfig.Embedding{BaseURL: "http://embedder/v1", Model: "hash", Dimensions: dim},
		Chunking:  podconfig.Chunking{MaxTokens: 120, OverlapTokens: 16, MergeBelowTokens: 40},
		Sources:   []podconfig.Source{{Name: "handbook", Path: docs, Principals: []string{"group:staff"}}},
	}
	store := knowledge.NewStore(client, collection, dim)
	return Run(ctx, cfg, Target{Store: store, Embedder: embedder,
		BatchTimeout: BatchTimeout{Base: 200 * time.Millisecond, PerInput: time.Millisecond}}, quiet{})
}

// An embedder too slow for big batches (it hangs on more than 8 inputs)
// still embeds every chunk: batches that time out are split in halves.
func TestSlowEmbedderIngestsEverythingBySplitting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	embedder := &fickle{hash: testenv.HashEmbedder{Dim: 16}, maxInputs: 8}
	summary, err := ingestDocs(ctx, t, "slow", embedder, nil)
	if err != nil {
		t.Fatal(err)
	}
	if summary.Chunks <= 8 || summary.Result.Written != summary.Chunks || summary.Result.Rows != int64(summary.Chunks) {
		t.Fatalf("%d chunks, wrote %d, %d rows stored: want every chunk (and more than one batch of 8 inputs)",
			summary.Chunks, summary.Result.Written, summary.Result.Rows)
	}
	embedder.mu.Lock()
	defer embedder.mu.Unlock()
	if embedder.sizes[0] <= 8 {
		t.Errorf("first call embedded %d inputs: the test wants a batch over 8", embedder.sizes[0])
	}
}

// An input the embedder can never embed fails the run naming its document.
func TestUnembeddableInputFailsTheRunNamingItsDocument(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	embedder := &fickle{hash: testenv.HashEmbedder{Dim: 16}, poison: "xyzzy"}
	_, err := ingestDocs(ctx, t, "poisoned", embedder, map[string]string{
		"poison.md": "# Poison\n\nThe magic word is xyzzy, which the embedder never takes.\n",
	})
	if err == nil || !strings.Contains(err.Error(), "document handbook/poison.md") || !strings.Contains(err.Error(), "500 Internal Server Error") {
		t.Fatalf("err %v, want it to name handbook/poison.md and the embedder's error", err)
	}
}
