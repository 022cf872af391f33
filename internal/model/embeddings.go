package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ragroute/ragroute/internal/tokenize"
)

// EmbeddingsConfig says how to reach an embeddings endpoint.
type EmbeddingsConfig struct {
	BaseURL    string
	Model      string
	APIKey     string
	Dimensions int
	// MaxInputTokens, when set, is the model's input limit, its special
	// tokens included: each input is cut (in Tokens, the count the
	// chunker keeps chunks under) to fit it before it is sent, as
	// sentence-transformers does. Servers such as llama.cpp refuse longer
	// inputs instead, and a long question must not fail a turn.
	MaxInputTokens int
	// Tokens counts the inputs (zero: BERT's, tokenize.NewInputCounter).
	Tokens tokenize.InputCounter
	// Timeout bounds one request, its retries included.
	Timeout time.Duration
	// Retry says how a 429, a 503 or a refused or reset connection is
	// retried; the zero value is DefaultRetryPolicy.
	Retry RetryPolicy
}

// ErrDimensions is the error when the embedder answers vectors of another size than
// configured. No retry or smaller batch helps.
var ErrDimensions = errors.New("wrong dimensions")

// Embeddings embeds texts through an OpenAI-compatible /embeddings API.
type Embeddings struct {
	client *openai.Client
	cfg    EmbeddingsConfig
	tokens tokenize.InputCounter // set when inputs are cut
	// retries counts the requests retried (429, 503, refused or reset).
	retries atomic.Int64
}

// Retries is how many requests this client has retried so far.
func (e *Embeddings) Retries() int64 { return e.retries.Load() }

// NewEmbeddings returns a client for cfg.
func NewEmbeddings(cfg EmbeddingsConfig) *Embeddings {
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	e := &Embeddings{cfg: cfg}
	// The context bounds each request, retries and their waits included.
	oc.HTTPClient = &http.Client{Transport: cfg.Retry.Transport(nil, &e.retries)}
	e.client = openai.NewClientWithConfig(oc)
	if cfg.MaxInputTokens > 0 {
		e.tokens = cfg.Tokens
		if e.tokens.IsZero() {
			e.tokens = tokenize.NewInputCounter()
		}
	}
	return e
}

// ErrNotFinite is the error when a vector holds NaN or an infinity, or
// is so long that its length overflows float32: a cosine against it is
// not a number, and stored it would poison every search.
var ErrNotFinite = errors.New("not a finite vector")

// Embed returns one vector per text, in order, each checked against the
// configured dimensions and for finite values: vectors of the wrong size
// or not finite would poison the index.
func (e *Embeddings) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	inputs := texts
	if e.cfg.MaxInputTokens > 0 {
		inputs = make([]string, len(texts))
		for i, t := range texts {
			inputs[i] = tokenize.Truncate(e.tokens, t, max(e.tokens.ContentBudget(e.cfg.MaxInputTokens, ""), 1))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	resp, err := e.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
		Input: inputs,
		Model: openai.EmbeddingModel(e.cfg.Model),
	})
	if err != nil {
		// Not an *Error: a route reports a failed embedder as the knowledge
		// search's, not the chat model's. StatusOf reads the status.
		return nil, fmt.Errorf("embeddings from %s (model %s): %w", e.cfg.BaseURL, e.cfg.Model, err)
	}
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings from %s: %d vectors for %d texts", e.cfg.BaseURL, len(resp.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings from %s: bad or repeated index %d", e.cfg.BaseURL, d.Index)
		}
		if e.cfg.Dimensions > 0 && len(d.Embedding) != e.cfg.Dimensions {
			return nil, fmt.Errorf("embeddings from %s (model %s): %d dimensions, the KnowledgeStore says %d (%w)",
				e.cfg.BaseURL, e.cfg.Model, len(d.Embedding), e.cfg.Dimensions, ErrDimensions)
		}
		if err := finite(d.Embedding); err != nil {
			return nil, fmt.Errorf("embeddings from %s (model %s): input %d: %w (%w)", e.cfg.BaseURL, e.cfg.Model, d.Index, err, ErrNotFinite)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// finite says what keeps v from being a finite vector: a component that
// is NaN or infinite, or a length whose square overflows float32 (what
// a cosine in float32, as Milvus computes it, would reach).
func finite(v []float32) error {
	var squares float64
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("component %d is %v", i, x)
		}
		squares += f * f
	}
	if squares > math.MaxFloat32 {
		return fmt.Errorf("its squared length %.3g overflows float32", squares)
	}
	return nil
}
