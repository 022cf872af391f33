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
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
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
	report, err := eval.Run(ctx, eval.Options{
		Corpus: *corpus, Questions: *questions,
		Client: func(alias string) *knowledge.Store { return knowledge.NewStore(client, alias, *dims) },
		Embedder: newEmbedder(podconfig.Embedding{BaseURL: *baseURL, Model: *modelName, APIKeyEnv: podconfig.EnvEmbeddingAPIKey,
			Dimensions: int32(*dims), MaxInputTokens: int32(*maxInput)}, os.Getenv, batchEmbedTimeout),
		Fingerprint:     fmt.Sprintf("%s/%d", *modelName, *dims),
		SimilarityFloor: *similarityFloor, StrictFloor: *strictFloor, Progress: stderr,
	})
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval:", err)
		return 1
	}
	fmt.Fprint(stdout, eval.Table(report))
	if *jsonOut != "" {
		data, _ := json.MarshalIndent(report, "", "  ")
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "ragroute eval:", err)
			return 1
		}
	}
	return 0
}
