package lab

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// weightSteps are the weights tried for each primitive beside the text
// vectors (weighed 1: scaling every weight alike changes nothing). A
// coarse grid: a fine one fits the questions, not the store (the
// cross-validated row says by how much a choice flatters itself).
var weightSteps = []float64{0, 0.25, 0.5, 1}

// weightOptions are the route body's outcomes under every weighting of
// the grid, nearest to equal weights first (the preferred of equals).
func (r *run) weightOptions(ctx context.Context) ([]option, []map[knowledge.Primitive]float64, error) {
	var grid []map[knowledge.Primitive]float64
	for _, textSparse := range weightSteps {
		for _, titleDense := range weightSteps {
			for _, titleSparse := range weightSteps {
				grid = append(grid, map[knowledge.Primitive]float64{knowledge.TextDense: 1, knowledge.TextSparse: textSparse,
					knowledge.TitleDense: titleDense, knowledge.TitleSparse: titleSparse})
			}
		}
	}
	slices.SortStableFunc(grid, func(a, b map[knowledge.Primitive]float64) int {
		return cmp.Compare(distanceFromEqual(a), distanceFromEqual(b))
	})
	options := make([]option, len(grid))
	for k, weights := range grid {
		c := r.routeConfig("sweep", r.fusionRoute(weights), nil)
		outcomes, err := r.searchAll(ctx, []config{c})
		if err != nil {
			return nil, nil, err
		}
		options[k] = option{label: formatWeights(weights), outcomes: outcomes[c.name]}
	}
	return options, grid, nil
}

func distanceFromEqual(weights map[knowledge.Primitive]float64) float64 {
	d := 0.0
	for _, w := range weights {
		d += math.Abs(1 - w)
	}
	return d
}

// dominanceSteps are the retrieval.diversity.dominance values tried, the
// default first (the preferred of equals).
var dominanceSteps = []float64{0.4, 0, 0.2, 0.3, 0.5, 0.6, 0.8}

// dominanceOptions are the route body's outcomes under each dominance.
func (r *run) dominanceOptions(ctx context.Context) ([]option, error) {
	options := make([]option, len(dominanceSteps))
	for k, d := range dominanceSteps {
		cfg := r.fusionRoute(nil)
		cfg.Retrieval.Diversity.Dominance = d
		c := r.routeConfig("sweep", cfg, nil)
		outcomes, err := r.searchAll(ctx, []config{c})
		if err != nil {
			return nil, err
		}
		options[k] = option{label: formatThreshold(d), outcomes: outcomes[c.name]}
	}
	return options, nil
}
