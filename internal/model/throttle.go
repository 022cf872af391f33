package model

import (
	"context"
	"fmt"
)

// throttled embeds in batches of at most batch texts, at most inFlight
// calls at once.
type throttled struct {
	inner Embedder
	batch int
	slots chan struct{}
}

// Throttled returns an embedder for background work that shares an
// embedding server with a turn's foreground (the query's embedding): each
// of its calls sends at most batch texts and at most inFlight of them run
// at once, so a foreground request waits behind a few small batches at
// most, never behind one large one. A call waits for a slot as long as
// its context lives.
func Throttled(inner Embedder, inFlight, batch int) Embedder {
	return &throttled{inner: inner, batch: max(batch, 1), slots: make(chan struct{}, max(inFlight, 1))}
}

func (t *throttled) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += t.batch {
		part := texts[start:min(start+t.batch, len(texts))]
		vectors, err := t.embed(ctx, part)
		if err != nil {
			return nil, err
		}
		if len(vectors) != len(part) {
			return nil, fmt.Errorf("the embedder returned %d vectors for %d texts", len(vectors), len(part))
		}
		out = append(out, vectors...)
	}
	return out, nil
}

// embed is one call under a slot.
func (t *throttled) embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to embed: %w", ctx.Err())
	}
	defer func() { <-t.slots }()
	return t.inner.Embed(ctx, texts)
}

// Retries is the inner embedder's count of retried calls, or 0 when it
// keeps none.
func (t *throttled) Retries() int64 { return retriesOf(t.inner) }
