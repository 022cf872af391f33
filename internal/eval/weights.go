package eval

import (
	"context"
	"math"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// weightSteps are the weights tried for each primitive beside the text
// vectors (weighed 1: scaling every weight alike changes nothing). A
// coarse grid: the weights are chosen on the same questions they are
// scored on, and a fine one would fit those questions, not the store.
var weightSteps = []float64{0, 0.25, 0.5, 1}

// bestWeights sweeps the fusion weights of the route body and returns the
// weights with the best nDCG@10 (ties: the best recall@5, then the weights
// nearest to equal).
func (r *run) bestWeights(ctx context.Context) (map[knowledge.Primitive]float64, error) {
	var best map[knowledge.Primitive]float64
	var bestScore Metrics
	for _, textSparse := range weightSteps {
		for _, titleDense := range weightSteps {
			for _, titleSparse := range weightSteps {
				weights := map[knowledge.Primitive]float64{knowledge.TextDense: 1, knowledge.TextSparse: textSparse,
					knowledge.TitleDense: titleDense, knowledge.TitleSparse: titleSparse}
				c := r.routeConfig("sweep", r.routeSettings(weights))
				outcomes, err := r.searchAll(ctx, []config{c})
				if err != nil {
					return nil, err
				}
				m := r.gold.score(r.questions, outcomes[c.name], r.tokens, r.intentOK)
				if best == nil || better(m, bestScore, weights, best) {
					best, bestScore = weights, m
				}
			}
		}
	}
	return best, nil
}

func better(m, than Metrics, weights, thanWeights map[knowledge.Primitive]float64) bool {
	const eps = 1e-9
	switch {
	case math.Abs(m.NDCG10-than.NDCG10) > eps:
		return m.NDCG10 > than.NDCG10
	case math.Abs(m.Recall5-than.Recall5) > eps:
		return m.Recall5 > than.Recall5
	}
	return distanceFromEqual(weights) < distanceFromEqual(thanWeights)
}

func distanceFromEqual(weights map[knowledge.Primitive]float64) float64 {
	d := 0.0
	for _, w := range weights {
		d += math.Abs(1 - w)
	}
	return d
}
