package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// runEval measures retrieval quality of the chunking and search ablations
// on a corpus and question set (see internal/eval).
func runEval(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ragroute eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	corpus := fs.String("corpus", "test/eval/corpus/argocd", "folder of Markdown documents")
	questions := fs.String("questions", "test/eval/dev.jsonl", "questions, JSON lines")
	milvusURI := fs.String("milvus-uri", "", "Milvus (or Milvus Lite) to build the evaluation collections in")
	baseURL := fs.String("embedding-base-url", "", "OpenAI-compatible embeddings endpoint")
	modelName := fs.String("embedding-model", "", "embedding model name")
	dims := fs.Int("dimensions", 384, "embedding dimensions")
	maxInput := fs.Int("max-input-tokens", 256, "cut embedder inputs to this many tokens, as the model does (0: no limit)")
	queryPrefix := fs.String("query-prefix", "", "the store's spec.embedding.queryPrefix (e5: \"query: \")")
	documentPrefix := fs.String("document-prefix", "", "the store's spec.embedding.documentPrefix (e5: \"passage: \")")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	vectorCache := fs.String("vector-cache", "", "keep embedded vectors in this folder between runs, per embedder")
	peer := fs.String("peer", "", "another system's results (hack/compare) to score beside ragroute's")
	explain := fs.Bool("explain", false, "print the route body's misses: each answerable question without a hit in its top 5")
	concurrency := fs.Int("concurrency", 4, "questions searched at once")
	similarityFloor := fs.Float64("similarity-floor", 0.2, "the route's retrieval.similarityFloor, for the not-found rate")
	strictFloor := fs.Float64("strict-floor", 0.35, "the route's retrieval.strictFloor, for the not-found rate")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *milvusURI == "" || *baseURL == "" || *modelName == "" {
		fmt.Fprintln(stderr, "ragroute eval: --milvus-uri, --embedding-base-url and --embedding-model are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := connectMilvus(ctx, podconfig.Milvus{URI: *milvusURI}, os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval:", err)
		return 1
	}
	defer client.Close(context.WithoutCancel(ctx))
	embedding := podconfig.Embedding{BaseURL: *baseURL, Model: *modelName, APIKeyEnv: podconfig.EnvEmbeddingAPIKey,
		Dimensions: int32(*dims), MaxInputTokens: int32(*maxInput), QueryPrefix: *queryPrefix, DocumentPrefix: *documentPrefix}
	env := environment(os.Getenv)
	report, err := eval.Run(ctx, eval.Options{
		Corpus: *corpus, Questions: *questions,
		Client:        func(alias string) *knowledge.Store { return knowledge.NewStore(client, alias, *dims) },
		Embedder:      newDocumentEmbedder(embedding, env, batchEmbedTimeout),
		QueryEmbedder: newQueryEmbedder(embedding, env, queryEmbedTimeout),
		// Not the store's fingerprint: that names the endpoint, and eval's
		// embedder listens on a new port every run.
		Fingerprint:     fmt.Sprintf("%s/%d/%d/%q/%q", *modelName, *dims, *maxInput, *queryPrefix, *documentPrefix),
		SimilarityFloor: *similarityFloor, StrictFloor: *strictFloor, Progress: stderr,
		VectorCache: *vectorCache, Peer: *peer, Concurrency: *concurrency,
	})
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval:", err)
		return 1
	}
	fmt.Fprint(stdout, eval.Table(report))
	if *explain {
		fmt.Fprint(stdout, eval.Explain(report.Misses))
	}
	if *jsonOut != "" {
		data, _ := json.MarshalIndent(report, "", "  ")
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "ragroute eval:", err)
			return 1
		}
	}
	return 0
}
