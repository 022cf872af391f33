package retrieval

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/testenv"
)

// pacedEmbedder takes perText a text, as a CPU embedder does.
type pacedEmbedder struct {
	*testenv.HashEmbedder
	perText time.Duration
}

func (e pacedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-time.After(time.Duration(len(texts)) * e.perText):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return e.HashEmbedder.Embed(ctx, texts)
}

// A grounding check that keeps the replica's shared embedder busy for
// many times the embed step's deadline delays a new turn's admission,
// but never fails its search: the query, once admitted, is embedded
// ahead of the check's texts, within the deadline.
func TestSearchMeetsItsEmbedDeadlineWhileTheCheckIsBusy(t *testing.T) {
	const perText, deadline = 5 * time.Millisecond, 100 * time.Millisecond
	shared := model.NewShared(pacedEmbedder{HashEmbedder: &testenv.HashEmbedder{Dim: 8}, perText: perText}, 2, 16)
	check := shared.Lane(model.Finishing)
	busy, stop := context.WithCancel(context.Background())
	defer stop()
	for c := range 6 { // 6 answers' checks of 32 units: ~0.5 s of the embedder's time, 5× the deadline
		units := make([]string, 32)
		for i := range units {
			units[i] = fmt.Sprintf("answer %d unit %d", c, i)
		}
		go func() { _, _ = check.Embed(busy, units) }()
	}
	time.Sleep(2 * perText) // the check's calls are in flight

	index := &fakeIndex{hits: []knowledge.Hit{hit("a1", "a", 1, "prose")}}
	gen := int64(1)
	s := newSearcher(index, &gen)
	s.Embedder, s.Timeouts.Embed = shared.Lane(model.Starting), deadline
	r, err := s.Search(context.Background(), "how do sync waves work", []string{"public"})
	if err != nil {
		t.Fatalf("the search failed while the check was busy: %v", err)
	}
	if r.Timings["embed"] > deadline {
		t.Errorf("the query's embedding took %v, past its %v deadline", r.Timings["embed"], deadline)
	}
	if len(r.Fragments) != 1 {
		t.Errorf("%d fragments, want 1", len(r.Fragments))
	}
}
