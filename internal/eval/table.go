package eval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// Table renders a report for a terminal.
func Table(r Report) string {
	var b strings.Builder
	b.WriteString(metricsTable(r.Order, r.Configs, func(name string) string {
		switch name {
		case r.Best:
			return " (route default)"
		case r.Baseline:
			return " (baseline)"
		}
		return ""
	}))
	fmt.Fprintf(&b, "%d questions. A result holds the gold section when it names the gold heading path exactly or holds\n"+
		"at least half of the section's text; R@Nkt: the gold among the whole results that fit in N tokens of context.\n", r.Questions)
	for _, name := range r.Order {
		if m := r.Configs[name]; m.RerankP50Millis > 0 {
			fmt.Fprintf(&b, "%s: the cross-encoder adds %.0f ms per search (p50), %.0f ms (p95), one search at a time\n",
				name, m.RerankP50Millis, m.RerankP95Millis)
		}
	}
	fmt.Fprintf(&b, "best fusion weights for this store (spec.search.weights): %s\n", formatWeights(r.Weights))
	b.WriteString(heldOutTable(r.HeldOut))
	b.WriteString(curveTable(r.Curves))
	return b.String()
}

// metricsTable renders one row of retrieval figures per configuration, in
// order, each followed by mark(name): the live route's evaluation prints
// its one row the same way.
func metricsTable(order []string, configs map[string]Metrics, mark func(string) string) string {
	var b strings.Builder
	width := 30 // the longest name sets the column
	for _, name := range order {
		width = max(width, len(name))
	}
	fmt.Fprintf(&b, "%-*s %6s %6s %6s %6s %7s %6s %8s %6s %6s %6s %6s %7s\n", width, "config", "R@1", "R@5", "R@10", "MRR", "nDCG@10",
		"fileR5", "notfound", "R@1kt", "R@2kt", "R@4kt", "intent", "p50 ms")
	for _, name := range order {
		m := configs[name]
		p50 := "-"
		if m.P50Millis > 0 {
			p50 = fmt.Sprintf("%.1f", m.P50Millis)
		}
		fmt.Fprintf(&b, "%-*s %6.3f %6.3f %6.3f %6.3f %7.3f %6.3f %8.3f %6.3f %6.3f %6.3f %6.3f %7s%s\n", width, name,
			m.Recall1, m.Recall5, m.Recall10, m.MRR, m.NDCG10, m.FileRecall5, m.NotFoundRate,
			m.RecallAtTokens[1000], m.RecallAtTokens[2000], m.RecallAtTokens[4000], m.IntentAccuracy, p50, mark(name))
	}
	return b.String()
}

func formatWeights(weights map[knowledge.Primitive]float64) string {
	var parts []string
	for _, p := range knowledge.AllPrimitives {
		if w, ok := weights[p]; ok {
			parts = append(parts, fmt.Sprintf("%s: %g", p, w))
		}
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ", ") + "}"
}
