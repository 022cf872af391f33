package retrieval

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// stalledIndex answers nothing until its caller gives up, as a dead
// Milvus behind a live connection does.
type stalledIndex struct{ fakeIndex }

func (*stalledIndex) HybridSearch(ctx context.Context, _ knowledge.SearchRequest) ([]knowledge.Hit, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// stalledReranker never answers before its deadline.
type stalledReranker struct{}

func (stalledReranker) Rerank(ctx context.Context, _ string, _ []Fragment) ([]Fragment, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestSearchStepsRunUnderTheirDeadlines(t *testing.T) {
	gen := int64(1)
	for name, tc := range map[string]struct {
		searcher func() *Searcher
	}{
		"search": {func() *Searcher {
			s := newSearcher(&stalledIndex{}, &gen)
			s.Timeouts.Search = 50 * time.Millisecond
			return s
		}},
		"rerank": {func() *Searcher {
			s := newSearcher(&fakeIndex{hits: []knowledge.Hit{hit("a1", "a", 1, "prose")}}, &gen)
			s.Reranker, s.Timeouts.Rerank = stalledReranker{}, 50*time.Millisecond
			return s
		}},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := tc.searcher().Search(context.Background(), "sync waves", []string{"group:staff"})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("error %v, want a deadline exceeded", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the search failed after %s", took)
			}
		})
	}
}

// A route config without timeouts runs with the deadlines the operator
// renders by default.
func TestTimeoutDefaultsMatchTheAPI(t *testing.T) {
	var zero Timeouts
	if zero.embed() != v1alpha1.DefaultEmbedTimeout || zero.search() != v1alpha1.DefaultSearchTimeout ||
		zero.rerank() != v1alpha1.DefaultRerankTimeout {
		t.Errorf("runtime defaults %s/%s/%s, API %s/%s/%s", zero.embed(), zero.search(), zero.rerank(),
			v1alpha1.DefaultEmbedTimeout, v1alpha1.DefaultSearchTimeout, v1alpha1.DefaultRerankTimeout)
	}
}
