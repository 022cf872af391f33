package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// corpusFlags are what both evaluations read: the corpus and questions,
// the Milvus to build their collections in, the embedder and the route's
// floors.
type corpusFlags struct {
	corpus, questions, milvusURI, baseURL, model, queryPrefix, documentPrefix, vectorCache *string
	dims, maxInput                                                                         *int
	similarityFloor, strictFloor                                                           *float64
}

func addCorpusFlags(fs *flag.FlagSet) corpusFlags {
	return corpusFlags{
		corpus:          fs.String("corpus", "test/eval/corpus/argocd", "folder of Markdown documents"),
		questions:       fs.String("questions", "test/eval/dev.jsonl", "questions, JSON lines"),
		milvusURI:       fs.String("milvus-uri", "", "Milvus (or Milvus Lite) to build the evaluation collections in"),
		baseURL:         fs.String("embedding-base-url", "", "OpenAI-compatible embeddings endpoint"),
		model:           fs.String("embedding-model", "", "embedding model name"),
		dims:            fs.Int("dimensions", 384, "embedding dimensions"),
		maxInput:        fs.Int("max-input-tokens", 256, "cut embedder inputs to this many tokens, as the model does (0: no limit)"),
		queryPrefix:     fs.String("query-prefix", "", "the store's spec.embedding.queryPrefix (e5: \"query: \")"),
		documentPrefix:  fs.String("document-prefix", "", "the store's spec.embedding.documentPrefix (e5: \"passage: \")"),
		vectorCache:     fs.String("vector-cache", "", "keep embedded vectors in this folder between runs, per embedder"),
		similarityFloor: fs.Float64("similarity-floor", 0.2, "the route's retrieval.similarityFloor"),
		strictFloor:     fs.Float64("strict-floor", 0.35, "the route's retrieval.strictFloor"),
	}
}

// missing reports whether a required flag is unset.
func (c corpusFlags) missing() bool {
	return *c.milvusURI == "" || *c.baseURL == "" || *c.model == ""
}

// connect opens Milvus; the caller closes the client.
func (c corpusFlags) connect(ctx context.Context) (*milvusclient.Client, error) {
	return connectMilvus(ctx, podconfig.Milvus{URI: *c.milvusURI}, os.Getenv)
}

func (c corpusFlags) embedding() podconfig.Embedding {
	return podconfig.Embedding{BaseURL: *c.baseURL, Model: *c.model, APIKeyEnv: podconfig.EnvEmbeddingAPIKey,
		Dimensions: int32(*c.dims), MaxInputTokens: int32(*c.maxInput), QueryPrefix: *c.queryPrefix, DocumentPrefix: *c.documentPrefix}
}

// options are eval.Options over client.
func (c corpusFlags) options(client *milvusclient.Client) eval.Options {
	embedding, env := c.embedding(), environment(os.Getenv)
	return eval.Options{
		Corpus: *c.corpus, Questions: *c.questions,
		Client:        func(alias string) *knowledge.Store { return knowledge.NewStore(client, alias, *c.dims) },
		Embedder:      newDocumentEmbedder(embedding, env, batchEmbedTimeout),
		QueryEmbedder: newQueryEmbedder(embedding, env, queryEmbedTimeout),
		// Not the store's fingerprint: that names the endpoint, and eval's
		// embedder listens on a new port every run. "cut2": the input cut
		// reserves the two special tokens, so vectors cached by the earlier
		// cut are not reused.
		Fingerprint:     fmt.Sprintf("%s/%d/%d/cut2/%q/%q", *c.model, *c.dims, *c.maxInput, *c.queryPrefix, *c.documentPrefix),
		SimilarityFloor: *c.similarityFloor, StrictFloor: *c.strictFloor, VectorCache: *c.vectorCache,
	}
}

// writeReport writes an evaluation's report as indented JSON to path.
func writeReport(path string, report any) error {
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the report: %w", err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
