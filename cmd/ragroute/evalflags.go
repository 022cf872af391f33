package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/eval/lab"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/routemanifest"
)

// localRerankModel is hack/models.sh's cross-encoder, the evaluations'
// reranker by default.
const localRerankModel = "ms-marco-MiniLM-L-12-v2"

// defaultRoute are the evaluations' route manifests: the sample QueryRoute
// and KnowledgeStore, with a PlatformPrompt worded for the eval corpus.
const defaultRoute = "config/samples/v1alpha1_queryroute.yaml,config/samples/v1alpha1_knowledgestore.yaml,test/eval/platformprompt.yaml"

// corpusFlags are what every evaluation reads: the corpus and questions,
// the route's manifests, the Milvus to build their collections in, the
// embedder, the cross-encoder and the route's floors.
type corpusFlags struct {
	fs                                                                                                *flag.FlagSet
	corpus, questions, milvusURI, baseURL, model, queryPrefix, documentPrefix, tokenizer, vectorCache *string
	route, rerankURL, rerankModel                                                                     *string
	dims, maxInput                                                                                    *int
	similarityFloor, strictFloor                                                                      *float64
}

func addCorpusFlags(fs *flag.FlagSet) corpusFlags {
	return corpusFlags{
		fs:              fs,
		route:           fs.String("route", defaultRoute, "the route's manifests (QueryRoute, KnowledgeStore, PlatformPrompt), comma-separated: the route evaluated, as the operator renders it"),
		rerankURL:       fs.String("rerank-base-url", "", "a /rerank endpoint (hack/models.sh run rerank) for the route's cross-encoder; without one a cross-encoder route is evaluated without it (a deviation)"),
		rerankModel:     fs.String("rerank-model", localRerankModel, "the rerank endpoint's model name"),
		corpus:          fs.String("corpus", "test/eval/corpus/argocd", "folder of Markdown documents"),
		questions:       fs.String("questions", "test/eval/dev.jsonl", "questions, JSON lines; several files comma-separated; empty: measure ingestion only (ragroute eval)"),
		milvusURI:       fs.String("milvus-uri", "", "Milvus (or Milvus Lite) to build the evaluation collections in"),
		baseURL:         fs.String("embedding-base-url", "", "OpenAI-compatible embeddings endpoint"),
		model:           fs.String("embedding-model", "", "embedding model name"),
		dims:            fs.Int("dimensions", 384, "embedding dimensions"),
		maxInput:        fs.Int("max-input-tokens", 256, "cut embedder inputs to this many tokens, as the model does (0: no limit)"),
		queryPrefix:     fs.String("query-prefix", "", "the store's spec.embedding.queryPrefix (e5: \"query: \")"),
		documentPrefix:  fs.String("document-prefix", "", "the store's spec.embedding.documentPrefix (e5: \"passage: \")"),
		tokenizer:       fs.String("tokenizer", "", "in place of the route's store's spec.embedding.tokenizer: bertUncased, or xlmRoberta (e5)"),
		vectorCache:     fs.String("vector-cache", "", "keep embedded vectors in this folder between runs, per embedder"),
		similarityFloor: fs.Float64("similarity-floor", 0, "retrieval.similarityFloor in place of the route's (a deviation)"),
		strictFloor:     fs.Float64("strict-floor", 0, "retrieval.strictFloor in place of the route's (a deviation)"),
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
		Dimensions: int32(*c.dims), MaxInputTokens: int32(*c.maxInput), QueryPrefix: *c.queryPrefix, DocumentPrefix: *c.documentPrefix,
		Tokenizer: podconfig.Tokenizer(*c.tokenizer)}
}

// questionFiles are the --questions files; none when it is empty (a
// corpus without a question set: `ragroute eval` measures ingestion only).
func (c corpusFlags) questionFiles() []string {
	if strings.TrimSpace(*c.questions) == "" {
		return nil
	}
	return strings.Split(*c.questions, ",")
}

// options are lab.Options over client.
func (c corpusFlags) options(client *milvusclient.Client) lab.Options {
	embedding := c.embedding()
	return lab.Options{
		Corpus: *c.corpus, Questions: c.questionFiles(),
		Client:        func(alias string) *knowledge.Store { return knowledge.NewStore(client, alias, *c.dims) },
		Embedder:      assembly.DocumentEmbedder(embedding, os.Getenv, assembly.BatchEmbedTimeout),
		QueryEmbedder: assembly.QueryEmbedder(embedding, os.Getenv, assembly.QueryEmbedTimeout),
		// Not the store's fingerprint: that names the endpoint, and eval's
		// embedder listens on a new port every run. "cut2": the input cut
		// reserves the two special tokens, so vectors cached by the earlier
		// cut are not reused.
		Fingerprint: fmt.Sprintf("%s/%d/%d/cut2/%q/%q%s", *c.model, *c.dims, *c.maxInput, *c.queryPrefix, *c.documentPrefix, tokenizerSuffix(*c.tokenizer)),
		VectorCache: *c.vectorCache,
		Secrets:     os.Getenv,
		Rerank:      lab.RerankEndpoint{BaseURL: *c.rerankURL, Model: *c.rerankModel, FirstStageWeight: retrieval.DefaultFirstStageWeight},
	}
}

// set says whether the command line set the flag name.
func (c corpusFlags) set(name string) bool {
	found := false
	c.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// routeUnderTest is the route the evaluation runs: --route's manifests as
// the operator renders them, pointed at the evaluation's embedder, Milvus
// and cross-encoder, with the settings the flags (and adjust) change; and
// those changes, setting by setting, to print with the report.
func (c corpusFlags) routeUnderTest(adjust func(cfg *podconfig.RouteConfig)) (podconfig.RouteConfig, []string, error) {
	shipped, err := routemanifest.Load(strings.Split(*c.route, ",")...)
	if err != nil {
		return podconfig.RouteConfig{}, nil, err
	}
	used := shipped
	if !c.set("tokenizer") {
		// The store's own: the flags name the evaluation's embedder, and
		// every later c.embedding() counts in its store's tokens.
		*c.tokenizer = string(shipped.Store.Embedding.Tokenizer)
	}
	used.Store.Milvus.URI, used.Store.Embedding = *c.milvusURI, c.embedding()
	if used.Rerank.Mode == podconfig.RerankCrossEncoder {
		if *c.rerankURL == "" {
			// Without its cross-encoder the strict floor reads a cosine
			// again: the operator's default for that scale.
			used.Rerank = podconfig.Rerank{Mode: podconfig.RerankRRF}
			used.Retrieval.StrictFloor = v1alpha1.DefaultStrictFloor
		} else {
			ce := *used.Rerank.CrossEncoder
			ce.BaseURL, ce.Model = *c.rerankURL, *c.rerankModel
			used.Rerank.CrossEncoder = &ce
		}
	}
	if c.set("similarity-floor") {
		used.Retrieval.SimilarityFloor = *c.similarityFloor
	}
	if c.set("strict-floor") {
		used.Retrieval.StrictFloor = *c.strictFloor
	}
	if adjust != nil {
		adjust(&used)
	}
	if err := used.Validate(); err != nil {
		return podconfig.RouteConfig{}, nil, fmt.Errorf("the route as the flags change it: %w", err)
	}
	return used, routemanifest.Deviations(shipped, used), nil
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
	fs                                 *flag.FlagSet
	chatURL, chatModel, modes, jsonOut string
	limit, concurrency                 int
	contextTokens, answerReserve       int
	turnTimeout                        time.Duration
	temperature                        float64
}

// addTurnFlags registers the turn flags; modes lists the modes the
// command runs, all of them by default.
func addTurnFlags(fs *flag.FlagSet, modes []string, turnTimeout time.Duration, turnTimeoutHelp string) *turnFlags {
	f := &turnFlags{fs: fs}
	fs.StringVar(&f.chatURL, "chat-base-url", "", "OpenAI-compatible chat endpoint")
	fs.StringVar(&f.chatModel, "chat-model", "", "chat model name")
	fs.StringVar(&f.modes, "modes", strings.Join(modes, ","), "modes to run, comma-separated: "+strings.Join(modes, ", "))
	fs.IntVar(&f.limit, "limit", 0, "run the first N questions only (0: all)")
	fs.IntVar(&f.concurrency, "concurrency", 1, "turns at once (a local model serves one at a time)")
	fs.DurationVar(&f.turnTimeout, "turn-timeout", turnTimeout, turnTimeoutHelp)
	fs.IntVar(&f.contextTokens, "context-tokens", 0, "window.contextTokens in place of the route's (a deviation)")
	fs.IntVar(&f.answerReserve, "answer-reserve", 0, "window.answerReserveTokens in place of the route's (a deviation)")
	fs.Float64Var(&f.temperature, "temperature", 0, "the chat model's temperature in place of the route's (a deviation)")
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

// apply points the route's chat model at --chat-base-url (none when it is
// empty: the route then answers extractively) and applies the turn flags the command line set. A turn's bound is
// the model's idle timeout too: a local model on a busy machine may read a
// full window for longer than the route's default idle minute.
func (f *turnFlags) apply(cfg *podconfig.RouteConfig) {
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	cfg.Model.BaseURL, cfg.Model.Name = f.chatURL, f.chatModel
	if f.chatURL == "" {
		// No model: the route quotes the fragments.
		cfg.Answer.Mode = podconfig.AnswerExtractive
	}
	cfg.Model.IdleTimeout = podconfig.Duration(f.turnTimeout)
	if set["context-tokens"] {
		cfg.Window.ContextTokens = int32(f.contextTokens)
	}
	if set["answer-reserve"] {
		cfg.Window.AnswerReserveTokens = int32(f.answerReserve)
	}
	if set["temperature"] {
		cfg.Model.Temperature = f.temperature
	}
}

// tokenizerSuffix names a tokenizer other than the default in the vector
// cache's fingerprint: other chunks, other vectors; the default keeps the
// vectors cached before tokenizers were named.
func tokenizerSuffix(t string) string {
	if t == "" || t == string(podconfig.TokenizerBERTUncased) {
		return ""
	}
	return "/" + t
}
