package lab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// Table renders a report for a terminal: on a corpus without questions,
// its ingestion rows only.
func Table(r Report) string {
	var b strings.Builder
	b.WriteString(routeText(r.Route, r.Deviations))
	if r.Questions == 0 {
		b.WriteString(ingestionTable(r.Ingestion))
		b.WriteString("No questions: ingestion only (chunking, embedding every text, writing a fresh collection). " +
			"A failure is the configuration's result; the others still ran.\n")
		return b.String()
	}
	b.WriteString(eval.MetricsTable(r.Order, r.Configs, func(name string) string {
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
	if len(r.Ingestion) > 0 {
		b.WriteString("Configurations whose ingestion failed (not scored):\n")
		b.WriteString(ingestionTable(r.Ingestion))
	}
	fmt.Fprintf(&b, "best fusion weights for this store (spec.search.weights): %s\n", formatWeights(r.Weights))
	b.WriteString(heldOutTable(r.HeldOut))
	b.WriteString(curveTable(r.Curves))
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

// routeText says which route was evaluated and every setting the
// evaluation changed from it as shipped.
func routeText(route string, deviations []string) string {
	if len(deviations) == 0 {
		return fmt.Sprintf("route %s as shipped\n", route)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "route %s as shipped, except:\n", route)
	for _, d := range deviations {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	return b.String()
}
