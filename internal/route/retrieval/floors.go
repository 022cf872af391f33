package retrieval

import (
	"log/slog"
	"sync"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// RelativeFloors resolves a route's floors against the background
// similarity recorded on the generation that serves the alias: a floor
// with sigmas is background mean + sigmas × standard deviation, which means
// the same for every embedder where a raw cosine does not. Its Floors is
// the Searcher's Floors hook. It does no I/O: Serving (a GenerationWatch's)
// reads the generation, with its background, at start and on every
// refresh; the floors are worked out again only when that changes.
type RelativeFloors struct {
	// Similarity and Strict are the raw floors: in force for a floor
	// without sigmas, and for every floor while the serving generation has
	// no background recorded.
	Similarity, Strict float64
	// SimilaritySigmas and StrictSigmas, when set, make that floor
	// relative to the background.
	SimilaritySigmas, StrictSigmas *float64
	// Serving is the generation that serves the alias.
	Serving func() (knowledge.Generation, bool)
	Logger  *slog.Logger

	mu     sync.Mutex
	key    *floorsKey // what the floors below were worked out for
	sim    float64
	strict float64
	warned int64 // the generation last warned about (0: none)
}

// floorsKey is what resolved floors depend on.
type floorsKey struct {
	generation int64
	background knowledge.Background
	recorded   bool
}

// Floors returns the similarity and strict floors in force now.
func (f *RelativeFloors) Floors() (similarity, strict float64) {
	gen, ok := f.Serving()
	if !ok {
		// No generation read yet (the route is starting): the raw floors.
		return f.Similarity, f.Strict
	}
	key := floorsKey{generation: gen.Number}
	if gen.Background != nil {
		key.background, key.recorded = *gen.Background, true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.key != nil && *f.key == key {
		return f.sim, f.strict
	}
	f.key = &key
	f.sim, f.strict = f.resolve(gen)
	return f.sim, f.strict
}

// resolve works the floors out for gen and says what it did, once per
// generation and background.
func (f *RelativeFloors) resolve(gen knowledge.Generation) (similarity, strict float64) {
	b := gen.Background
	if b == nil {
		if f.warned != gen.Number {
			f.warned = gen.Number
			f.Logger.Warn("relative floors: the serving generation has no background similarity recorded; "+
				"using the raw floors until an ingestion records one",
				"generation", gen.Number, "collection", gen.Collection,
				"similarityFloor", f.Similarity, "strictFloor", f.Strict)
		}
		return f.Similarity, f.Strict
	}
	similarity, strict = f.Similarity, f.Strict
	if f.SimilaritySigmas != nil {
		similarity = b.Floor(*f.SimilaritySigmas)
	}
	if f.StrictSigmas != nil {
		strict = b.Floor(*f.StrictSigmas)
	}
	f.Logger.Info("relative floors resolved", "generation", gen.Number, "collection", gen.Collection,
		"backgroundMean", b.Mean, "backgroundStdDev", b.StdDev, "similarityFloor", similarity, "strictFloor", strict)
	return similarity, strict
}
