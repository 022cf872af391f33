package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// searchDepth is how many candidates each primitive returns: deep enough
// for every configuration's fusion.
const searchDepth = 30

// listIndex serves the route's searches from each primitive's ranking,
// fetched once per question from Milvus and fused here with the weights of
// each request (as the store fuses them), so every configuration and every
// weighting sees the same rankings and the weight sweep costs no searches.
type listIndex struct {
	store *knowledge.Store
	lists map[string][][]knowledge.Hit // by query, in knowledge.AllPrimitives order

	mu    sync.Mutex
	parts map[string][]knowledge.Row
}

func newListIndex(ctx context.Context, store *knowledge.Store, questions []eval.Question, vectors map[string][]float32, depth, concurrency int) (*listIndex, error) {
	x := &listIndex{store: store, lists: map[string][][]knowledge.Hit{}, parts: map[string][]knowledge.Row{}}
	var mu sync.Mutex
	group, ctx := errgroup.WithContext(ctx)
	group.SetLimit(concurrency)
	for _, q := range questions {
		group.Go(func() error {
			lists := make([][]knowledge.Hit, len(knowledge.AllPrimitives))
			for i, p := range knowledge.AllPrimitives {
				hits, err := store.HybridSearch(ctx, knowledge.SearchRequest{Query: q.Question, Vector: vectors[q.Question],
					Principals: []string{"public"}, Primitives: []knowledge.Primitive{p}, Candidates: depth})
				if err != nil {
					return fmt.Errorf("question %s, %s: %w", q.ID, p, err)
				}
				lists[i] = hits
			}
			mu.Lock()
			defer mu.Unlock()
			x.lists[q.Question] = lists
			return nil
		})
	}
	return x, group.Wait()
}

// HybridSearch fuses the question's rankings.
func (x *listIndex) HybridSearch(_ context.Context, req knowledge.SearchRequest) ([]knowledge.Hit, error) {
	lists, ok := x.lists[req.Query]
	if !ok {
		return nil, fmt.Errorf("no rankings for %q", req.Query)
	}
	primitives := req.Primitives
	if len(primitives) == 0 {
		primitives = knowledge.AllPrimitives
	}
	var use [][]knowledge.Hit
	for _, p := range primitives {
		i := slices.Index(knowledge.AllPrimitives, p)
		use = append(use, lists[i][:min(len(lists[i]), req.Candidates)])
	}
	return knowledge.Fuse(primitives, use, req.Weights, req.RRFK, req.Candidates), nil
}

// Parts reads split sections from the store once.
func (x *listIndex) Parts(ctx context.Context, parentIDs []string, principals []string) (map[string][]knowledge.Row, error) {
	key := strings.Join(parentIDs, ",")
	x.mu.Lock()
	defer x.mu.Unlock()
	out := map[string][]knowledge.Row{}
	var missing []string
	for _, id := range parentIDs {
		if rows, ok := x.parts[id]; ok {
			out[id] = rows
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	found, err := x.store.Parts(ctx, missing, principals)
	if err != nil {
		return nil, fmt.Errorf("parts %s: %w", key, err)
	}
	for _, id := range missing {
		x.parts[id] = found[id]
		out[id] = found[id]
	}
	return out, nil
}

// Current reads the store: the eval's searches run without a cache, so
// nothing calls it in a run.
func (x *listIndex) Current(ctx context.Context, ids, parentIDs []string, principals []string) ([]knowledge.RowVersion, error) {
	return x.store.Current(ctx, ids, parentIDs, principals)
}
