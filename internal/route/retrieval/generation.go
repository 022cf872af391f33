package retrieval

import (
	"context"
	"fmt"
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
// similarity, for relative floors; the embedder and the keyword analyzer
// that built it), read with it.
type GenerationWatch struct {
	Index  ActiveIndex
	Logger *slog.Logger
	// Embedder is the embedder the route embeds questions with. When set,
	// a generation recorded as built by another embedder is refused
	// (Mismatch), until one built by this embedder serves.
	Embedder knowledge.EmbedderInfo
	// Analyzer is the ID of the analyzer the route prepares keyword
	// queries with (knowledge.Store.AnalyzerID). When set, a generation
	// recorded as built by another is refused (Mismatch).
	Analyzer string

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

// Mismatch is an *EmbedderMismatchError when the last generation seen
// serving the alias was built by another embedder (model, dimensions or
// input prefixes) than the route's: its vectors and the route's query
// vectors do not compare, and a search would find noise. The endpoint is
// not compared: the same model reached at another address embeds alike.
// Else it is an *AnalyzerMismatchError when the generation's keyword
// index was built by another analyzer than the route's: its terms and
// the route's query terms do not meet. Nil when both match, when the
// generation names neither (built before ingestions recorded them:
// unknown does not block), when the watch has neither, or before any
// generation was seen.
func (g *GenerationWatch) Mismatch() error {
	gen, ok := g.Serving()
	switch {
	case !ok:
		return nil
	case gen.EmbedderInfo != nil && g.Embedder.Model != "" && *gen.EmbedderInfo != g.Embedder:
		return &EmbedderMismatchError{Generation: gen.Number, Index: *gen.EmbedderInfo, Route: g.Embedder}
	case gen.Analyzer != "" && g.Analyzer != "" && gen.Analyzer != g.Analyzer:
		return &AnalyzerMismatchError{Generation: gen.Number, Index: gen.Analyzer, Route: g.Analyzer}
	}
	return nil
}

// Read reads the serving generation now, keeps it, and says whether it
// serves this route: ok is false when no generation serves the alias yet;
// err is a read failure, an *EmbedderMismatchError or an
// *AnalyzerMismatchError. The readiness check
// calls it, so a swapped-in generation is followed within a probe period.
func (g *GenerationWatch) Read(ctx context.Context) (ok bool, err error) {
	gen, ok, err := g.Index.Active(ctx)
	if err != nil || !ok {
		return false, err
	}
	g.keep(gen)
	return true, g.Mismatch()
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
		g.keep(gen)
	}
}

// keep makes gen the serving generation.
func (g *GenerationWatch) keep(gen knowledge.Generation) {
	g.serving.Store(&gen)
	g.current.Store(gen.Number)
}

// EmbedderMismatchError says that the generation serving the alias was
// built by another embedder than the route embeds questions with. Its text
// names both embedders (no address), for the client and the log alike.
type EmbedderMismatchError struct {
	Generation int64
	// Index built the generation; Route embeds the questions.
	Index, Route knowledge.EmbedderInfo
}

func (e *EmbedderMismatchError) Error() string {
	return fmt.Sprintf("the knowledge index (generation %d) was built by the embedder %s, but this route embeds questions with %s: "+
		"their vectors do not compare, so the route searches nothing until an ingestion with its embedder swaps in a new generation",
		e.Generation, e.Index, e.Route)
}

// AnalyzerMismatchError says that the generation serving the alias was
// built by another keyword analyzer (the store's
// spec.search.lexical.languages) than the route prepares queries with:
// its BM25 terms and the route's would not meet. Its text names both.
type AnalyzerMismatchError struct {
	Generation int64
	// Index built the generation's keyword index; Route prepares queries.
	Index, Route string
}

func (e *AnalyzerMismatchError) Error() string {
	return fmt.Sprintf("the knowledge index (generation %d) was built by the keyword analyzer %q, but this route analyzes questions with %q: "+
		"their keyword terms do not meet, so the route searches nothing until an ingestion with its analyzer swaps in a new generation",
		e.Generation, e.Index, e.Route)
}
