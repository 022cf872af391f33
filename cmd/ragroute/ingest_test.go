package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

// TestIngestCommand runs `ragroute ingest` against Milvus Lite and a
// scripted embeddings server: a full run, an idempotent rerun, and a run
// with a refused document that still ingests the rest and succeeds, the
// document named and the count recorded for the store's status.
func TestIngestCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	milvus := startMilvus(ctx, t)
	models := testenv.StartModelServer(32)
	t.Cleanup(models.Close)

	docs := t.TempDir()
	for _, name := range []string{"nested-headings.md", "long-table.md", "ui-screen.md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "internal", "ingest", "testdata", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := podconfig.IngestConfig{
		Version: podconfig.IngestVersion, Store: "docs",
		Milvus:    podconfig.Milvus{URI: milvus.URI, Collection: "docs"},
		Embedding: podconfig.Embedding{BaseURL: models.BaseURL(), Model: "hash", Dimensions: 32, MaxInputTokens: 256},
		Chunking:  podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources:   []podconfig.Source{{Name: "handbook", Path: docs, Principals: []string{"group:staff"}}},
	}
	configPath := filepath.Join(t.TempDir(), "ingest.json")
	writeConfig := func() {
		data, _ := json.Marshal(cfg)
		if err := os.WriteFile(configPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig()
	ingest := func() (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run([]string{"ingest", "--config", configPath}, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := ingest()
	if code != 0 || !strings.Contains(out, "3 files") || !strings.Contains(out, "(0 embedded cut to the embedder's input)") ||
		!strings.Contains(out, "generation 1 (docs_g1)") ||
		!strings.Contains(out, "background similarity: mean ") {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = ingest()
	if code != 0 || !strings.Contains(out, " 0 written, 0 deleted") {
		t.Fatalf("second run should write nothing: exit %d\n%s", code, out)
	}

	if err := os.WriteFile(filepath.Join(docs, "bad.md"), []byte("---\nacl: admins\n---\n# Secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = ingest()
	if code != 0 || !strings.Contains(errOut, `principal "admins"`) || !strings.Contains(out, "3 files") ||
		!strings.Contains(errOut, "1 documents refused and not ingested; the rest is ingested and the count recorded on the generation") {
		t.Fatalf("run with a bad document: exit %d\n%s%s", code, out, errOut)
	}

	cfg.Embedding.Dimensions = 16
	writeConfig()
	code, _, errOut = ingest()
	if code != 1 || !strings.Contains(errOut, "32 dimensions, the KnowledgeStore says 16") {
		t.Fatalf("dimension mismatch: exit %d\n%s", code, errOut)
	}
}

func decodeJSON(t *testing.T, r io.ReadCloser, into any) {
	t.Helper()
	defer r.Close()
	if err := json.NewDecoder(r).Decode(into); err != nil {
		t.Fatal(err)
	}
}
