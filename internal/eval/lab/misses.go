package lab

import (
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
)

// Miss is an answerable question the route body did not rank in its top
// 5, with what it returned instead: what `--explain` prints.
type Miss struct {
	Question eval.Question
	Rank     int // of the first hit in the top 10, 0 for none
	// Ablation is the rank tree-hybrid gave it, for comparison.
	Ablation int
	Top      []eval.Unit
}

func (r *run) misses(route, ablation []eval.Outcome) []Miss {
	var out []Miss
	for i, q := range r.questions {
		if !q.Answerable() {
			continue
		}
		if rank := r.gold.FirstHit(route[i].Units, q); rank == 0 || rank > 5 {
			out = append(out, Miss{Question: q, Rank: rank, Ablation: r.gold.FirstHit(ablation[i].Units, q),
				Top: route[i].Units[:min(5, len(route[i].Units))]})
		}
	}
	return out
}

// Explain renders misses for a reader tracking down a regression.
func Explain(misses []Miss) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d answerable questions without a hit in the route body's top 5:\n", len(misses))
	for _, m := range misses {
		q := m.Question
		fmt.Fprintf(&b, "\n%s (%s, %s) rank %d, %s rank %d: %s\n  gold: %s › %s\n", q.ID, q.Intent, q.Difficulty,
			m.Rank, TreeHybrid, m.Ablation, q.Question, *q.GoldFile, strings.Join(q.GoldHeading, " › "))
		for i, u := range m.Top {
			fmt.Fprintf(&b, "  %d. %s › %s\n", i+1, u.Source, strings.Join(u.HeadingPath, " › "))
		}
	}
	return b.String()
}
