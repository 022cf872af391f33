package retrieval

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/testenv"
)

// servingIndex serves one generation.
type servingIndex struct{ gen knowledge.Generation }

func (s *servingIndex) Active(context.Context) (knowledge.Generation, bool, error) {
	return s.gen, true, nil
}

// A search over a generation of another embedder fails with the mismatch
// before the cache, the embedder or the index is asked, whoever calls it
// (a turn's tool as much as the API); a generation of the route's embedder
// is searched again, and one that names no embedder is not blocked.
func TestSearchRefusesAGenerationOfAnotherEmbedder(t *testing.T) {
	e5 := knowledge.EmbedderInfo{Model: "e5-small", Dimensions: 8, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	minilm := knowledge.EmbedderInfo{Model: "all-MiniLM-L6-v2", Dimensions: 8}
	active := &servingIndex{gen: knowledge.Generation{Number: 1, EmbedderInfo: &e5}}
	watch := &GenerationWatch{Index: active, Embedder: e5}
	index := &fakeIndex{hits: []knowledge.Hit{hit("a1", "a", 1, "prose")}}
	s := newSearcher(index, new(int64))
	s.Generation, s.IndexMismatch = watch.Load, watch.Mismatch
	if _, err := watch.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(context.Background(), "sync waves", []string{"public"}); err != nil || index.searches != 1 {
		t.Fatalf("own embedder: %v after %d searches", err, index.searches)
	}

	// Generation 1 now says another embedder built it (the cached answer
	// is still keyed on generation 1).
	active.gen = knowledge.Generation{Number: 1, EmbedderInfo: &minilm}
	ok, err := watch.Read(context.Background())
	var mismatch *EmbedderMismatchError
	if !ok || !errors.As(err, &mismatch) || mismatch.Index != minilm || mismatch.Route != e5 {
		t.Fatalf("another embedder's generation reads as %v, %v", ok, err)
	}
	embedder := s.Embedder.(*testenv.HashEmbedder)
	before := embedder.Calls
	if _, err := s.Search(context.Background(), "sync waves", []string{"public"}); !errors.As(err, &mismatch) {
		t.Errorf("search over another embedder's generation: %v, want the mismatch", err)
	}
	if index.searches != 1 || embedder.Calls != before {
		t.Errorf("the refused search reached the index (%d searches) or the embedder (%d calls)", index.searches-1, embedder.Calls-before)
	}
	for _, name := range []string{`"all-MiniLM-L6-v2" (8 dimensions, no input prefixes)`, `"e5-small" (8 dimensions, query prefix "query: "`} {
		if !strings.Contains(mismatch.Error(), name) {
			t.Errorf("the mismatch %q does not name %s", mismatch.Error(), name)
		}
	}

	for _, gen := range []knowledge.Generation{{Number: 2, EmbedderInfo: &e5}, {Number: 3, Embedder: "fp-unnamed"}} {
		active.gen = gen
		if _, err := watch.Read(context.Background()); err != nil {
			t.Fatalf("generation %d: %v", gen.Number, err)
		}
		searches := index.searches
		if _, err := s.Search(context.Background(), "sync waves", []string{"public"}); err != nil || index.searches != searches+1 {
			t.Errorf("generation %d (embedder %v): %v, want it searched", gen.Number, gen.EmbedderInfo, err)
		}
	}
}
