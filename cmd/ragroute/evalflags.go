package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"

	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/ragroute/ragroute/internal/eval/lab"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// localRerankModel is hack/models.sh's cross-encoder, the evaluations'
// reranker by default.
const localRerankModel = "ms-marco-MiniLM-L-12-v2"

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
	return assembly.ConnectMilvus(ctx, podconfig.Milvus{URI: *c.milvusURI}, os.Getenv)
}

func (c corpusFlags) embedding() podconfig.Embedding {
	return podconfig.Embedding{BaseURL: *c.baseURL, Model: *c.model, APIKeyEnv: podconfig.EnvEmbeddingAPIKey,
		Dimensions: int32(*c.dims), MaxInputTokens: int32(*c.maxInput), QueryPrefix: *c.queryPrefix, DocumentPrefix: *c.documentPrefix}
}

// options are lab.Options over client.
func (c corpusFlags) options(client *milvusclient.Client) lab.Options {
	embedding := c.embedding()
	return lab.Options{
		Corpus: *c.corpus, Questions: *c.questions,
		Client:        func(alias string) *knowledge.Store { return knowledge.NewStore(client, alias, *c.dims) },
		Embedder:      assembly.DocumentEmbedder(embedding, os.Getenv, assembly.BatchEmbedTimeout),
		QueryEmbedder: assembly.QueryEmbedder(embedding, os.Getenv, assembly.QueryEmbedTimeout),
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

// turnFlags are the flags of the evaluations that run whole turns with a
// chat model (eval-answers, eval-agentic); each gives its own defaults
// for a turn's bound and the window.
type turnFlags struct {
	chatURL, chatModel, modes, jsonOut string
	limit, concurrency                 int
	contextTokens, answerReserve       int
	turnTimeout                        time.Duration
	temperature                        float64
}

// addTurnFlags registers the turn flags; modes lists the modes the
// command runs, all of them by default.
func addTurnFlags(fs *flag.FlagSet, modes []string, turnTimeout time.Duration, turnTimeoutHelp string, contextTokens int) *turnFlags {
	f := &turnFlags{}
	fs.StringVar(&f.chatURL, "chat-base-url", "", "OpenAI-compatible chat endpoint")
	fs.StringVar(&f.chatModel, "chat-model", "", "chat model name")
	fs.StringVar(&f.modes, "modes", strings.Join(modes, ","), "modes to run, comma-separated: "+strings.Join(modes, ", "))
	fs.IntVar(&f.limit, "limit", 0, "run the first N questions only (0: all)")
	fs.IntVar(&f.concurrency, "concurrency", 1, "turns at once (a local model serves one at a time)")
	fs.DurationVar(&f.turnTimeout, "turn-timeout", turnTimeout, turnTimeoutHelp)
	fs.IntVar(&f.contextTokens, "context-tokens", contextTokens, "the route's window.contextTokens")
	fs.IntVar(&f.answerReserve, "answer-reserve", 512, "the route's window.answerReserveTokens (and the answer's max tokens)")
	// Near-greedy: the modes then differ by what the route does, not by
	// sampling. Not 0: a configured zero is left out of the request, and
	// the server's default applies.
	fs.Float64Var(&f.temperature, "temperature", 0.01, "the chat model's sampling temperature")
	fs.StringVar(&f.jsonOut, "json", "", "also write the report as JSON to this file")
	return f
}

// modeList is --modes as a list.
func (f *turnFlags) modeList() []string {
	var out []string
	for _, m := range strings.Split(f.modes, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}
