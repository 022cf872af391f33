package lab

import (
	"context"
	"slices"

	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// screenFirst is route-v1's order, which the route no longer ships: for a
// screen question every screen fragment goes ahead, the best candidate
// included, where the route keeps its best candidate first and puts the
// screen fragments right after it. The lab gives it to the assembly as
// the rerank step (assembly.Parts.Reranker); the candidates then reach
// the route's own step in an order it leaves as it is.
type screenFirst struct{}

// Rerank moves the screen fragments ahead for a screen question, in
// their order.
func (screenFirst) Rerank(_ context.Context, query string, fragments []retrieval.Fragment) ([]retrieval.Fragment, error) {
	if retrieval.ClassifyIntent(query) != retrieval.IntentScreen {
		return fragments, nil
	}
	out := slices.Clone(fragments)
	slices.SortStableFunc(out, func(a, b retrieval.Fragment) int { return screenRank(a) - screenRank(b) })
	return out, nil
}

// screenRank sorts screen fragments before the others.
func screenRank(f retrieval.Fragment) int {
	if f.Kind == string(retrieval.IntentScreen) {
		return 0
	}
	return 1
}
