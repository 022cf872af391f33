package retrieval

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// ActiveIndex says which generation serves a store's alias.
type ActiveIndex interface {
	Active(ctx context.Context) (knowledge.Generation, bool, error)
}

// GenerationWatch keeps the index generation (part of every cache key)
// current, so a rebuilt index never serves cached fragments of the old one.
// It keeps what the generation's collection records too (its background
// similarity, for relative floors), read with it.
type GenerationWatch struct {
	Index  ActiveIndex
	Logger *slog.Logger

	current atomic.Int64
	serving atomic.Pointer[knowledge.Generation]
}

// Load is the last generation seen serving the alias.
func (g *GenerationWatch) Load() int64 { return g.current.Load() }

// Serving is the last generation seen serving the alias, as its collection
// described it; ok is false until one was seen.
func (g *GenerationWatch) Serving() (gen knowledge.Generation, ok bool) {
	if p := g.serving.Load(); p != nil {
		return *p, true
	}
	return knowledge.Generation{}, false
}

// Run reads the generation now and every interval until ctx ends.
func (g *GenerationWatch) Run(ctx context.Context, every time.Duration) {
	g.refresh(ctx)
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			g.refresh(ctx)
		}
	}
}

func (g *GenerationWatch) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	gen, ok, err := g.Index.Active(ctx)
	switch {
	case err != nil:
		g.Logger.Warn("read index generation", "error", err)
	case ok:
		g.serving.Store(&gen)
		g.current.Store(gen.Number)
	}
}
