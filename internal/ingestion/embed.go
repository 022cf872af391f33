package ingestion

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
)

// Defaults of BatchTimeout: a batch of n inputs may take 30s + n×5s (64
// inputs, 32 chunks: 5m50s), under the embedder's own request timeout.
const (
	defaultBatchBase     = 30 * time.Second
	defaultBatchPerInput = 5 * time.Second
)

// BatchTimeout bounds one embedding call by its size: Base plus PerInput
// for each input. Zero fields take the defaults (30s, 5s).
type BatchTimeout struct {
	Base     time.Duration
	PerInput time.Duration
}

func (b BatchTimeout) of(n int) time.Duration {
	if b.Base <= 0 {
		b.Base = defaultBatchBase
	}
	if b.PerInput <= 0 {
		b.PerInput = defaultBatchPerInput
	}
	return b.Base + time.Duration(n)*b.PerInput
}

var errBatchTimeout = errors.New("the batch's timeout passed")

// splitting embeds a batch whole and, when that fails (the client has
// already retried a 429, a 503 or a reset connection) or times out, in
// halves, recursively down to single inputs: a slow or overloaded
// embedder still embeds everything, in smaller calls. An input that fails
// alone fails the run: a knowledge.InputError, by which the sync names
// its document.
type splitting struct {
	embedder knowledge.Embedder
	timeout  BatchTimeout
}

func newSplitting(embedder knowledge.Embedder, timeout BatchTimeout) *splitting {
	return &splitting{embedder: embedder, timeout: timeout}
}

func (s *splitting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vectors, err := s.embed(ctx, texts)
	if err == nil || ctx.Err() != nil || !splittable(err) {
		return vectors, err
	}
	if len(texts) == 1 {
		return nil, &knowledge.InputError{Index: 0, Err: fmt.Errorf("an input (%.60q) could not be embedded, even alone: %w", texts[0], err)}
	}
	half := len(texts) / 2
	head, err := s.Embed(ctx, texts[:half])
	if err != nil {
		return nil, err
	}
	tail, err := s.Embed(ctx, texts[half:])
	if input, ok := errors.AsType[*knowledge.InputError](err); ok {
		input.Index += half // its place in texts, not in the tail
	}
	if err != nil {
		return nil, err
	}
	return append(head, tail...), nil
}

// embed is one call, bounded by the batch's size.
func (s *splitting) embed(ctx context.Context, texts []string) ([][]float32, error) {
	timeout := s.timeout.of(len(texts))
	call, cancel := context.WithTimeoutCause(ctx, timeout, errBatchTimeout)
	defer cancel()
	vectors, err := s.embedder.Embed(call, texts)
	if err == nil && len(vectors) != len(texts) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vectors), len(texts))
	}
	if err != nil && ctx.Err() == nil && context.Cause(call) == errBatchTimeout {
		err = fmt.Errorf("%d inputs took over %s: %w", len(texts), timeout, err)
	}
	return vectors, err
}

// splittable: a smaller batch may succeed. Not when the vectors are of
// the wrong size, the server still rate-limits after the client's
// retries (smaller calls would only be more), or it refuses the key or
// the model: the config is wrong, and every input would fail alike.
func splittable(err error) bool {
	if errors.Is(err, model.ErrDimensions) {
		return false
	}
	switch model.StatusOf(err) {
	case http.StatusTooManyRequests, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return false
	}
	return true
}
