package lab

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
)

// AgenticTable renders an agentic report for a terminal: one row per
// mode and kind of question.
func AgenticTable(r AgenticReport) string {
	var b strings.Builder
	b.WriteString(routeText(r.Route, r.Deviations))
	reranker := cmp.Or(r.Reranker, "none")
	fmt.Fprintf(&b, "%d questions (%d multi-part, %d single-part controls), chat model %s, window %d / answer reserve %d tokens, "+
		"searchPolicy %s, maxFragments %d, cross-encoder %s\n",
		r.Questions, r.MultiPart, r.Controls, r.Model, r.ContextTokens, r.AnswerReserve, r.Policy, r.MaxFragments, reranker)
	fmt.Fprintf(&b, "%-12s %-9s %5s %11s %8s %9s %6s %7s %9s %6s %6s %7s %7s %4s\n", "mode", "questions", "turns", "part recall",
		"all parts", "grounded", "rounds", "search", "model", "forced", "NF", "p50 s", "p95 s", "err")
	for _, m := range r.Modes {
		for _, row := range []struct {
			kind string
			g    GroupFigures
		}{{"multi", m.MultiPart}, {"control", m.Controls}} {
			if row.g.Questions == 0 {
				continue
			}
			g := row.g
			fmt.Fprintf(&b, "%-12s %-9s %5d %11s %8.3f %9s %6.2f %7.2f %9.2f %6d %6d %7s %7s %4d\n", m.Mode, row.kind, g.Questions,
				fmt.Sprintf("%.3f %d/%d", g.PartRecall, g.PartsFound, g.Parts), g.AllParts, ratioText(g), g.Rounds, g.Searches, g.ModelCalls,
				g.Forced, g.NotFound, eval.Seconds(g.TotalP50), eval.Seconds(g.TotalP95), g.Errors)
		}
	}
	b.WriteString("part recall: parts whose gold section a fragment of the answer's final set holds (agentic: the retrieval\n" +
		"event after the research; single round: the turn's retrieval events), by the eval's scorer; all parts: questions\n" +
		"with every part found; grounded: mean grounded_ratio of the answered turns; rounds, search (accepted searches),\n" +
		"model (chat calls): means per completed turn; forced: research finalized by the harness; NF: not-found answers;\n" +
		"p50/p95: whole turn.\n")
	return b.String()
}

func ratioText(g GroupFigures) string {
	if g.GroundedRatio == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", *g.GroundedRatio)
}
