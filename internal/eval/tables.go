package eval

import (
	"fmt"
	"strings"
)

// The tables a terminal reads, shared by the lab's reports and the live
// route's.

// MetricsTable renders one row of retrieval figures per configuration, in
// order, each followed by mark(name): the live route's evaluation prints
// its one row the same way.
func MetricsTable(order []string, configs map[string]Metrics, mark func(string) string) string {
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

// ModesTable renders one row of answer figures per mode, with their
// legend: the live route's evaluation prints its turns the same way.
func ModesTable(modes []ModeFigures) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-17s %6s %9s %7s %7s %6s %6s %6s %6s %6s %9s %8s %8s %8s %4s\n", "mode", "turns", "grounded",
		"cite P", "cite R", "URL!", "links-", "NF un", "NF ans", "repl", "withheld", "TTFT p50", "TTFT p90", "total50", "err")
	for _, m := range modes {
		fmt.Fprintf(&b, "%-17s %6d %9s %7s %7.3f %6d %6d %6.2f %6.2f %6.2f %9s %8s %8s %8s %4d\n", m.Mode, m.Turns,
			grounded(m), optional(m.CitationPrecision), m.CitationRecall, m.UnsupportedURLTurns, m.LinksRemoved,
			m.NotFound, m.FalseNotFound, m.Replaced, fmt.Sprintf("%d/%d", m.Withheld, m.Sentences),
			Seconds(m.TTFTP50), Seconds(m.TTFTP90), Seconds(m.TotalP50), m.Errors)
	}
	b.WriteString("grounded: mean grounded_ratio of answered turns (* measured by the evaluation with answer.ScoreSupport, the route\n" +
		"does not check extractive answers); cite P/R: cited markers whose fragment holds the gold section / answerable\n" +
		"questions whose gold section is cited; URL!: answers showing a URL no packed fragment or the platform prompt holds;\n" +
		"links-: links the route removed; NF un / NF ans: not-found on unanswerable / answerable questions; repl: answers\n" +
		"replaced by the extractive one (fallback below fallbackBelow, strip when every sentence is withheld); withheld:\n" +
		"sentences withheld / checked; TTFT: first delta of answered turns; times in seconds.\n")
	return b.String()
}

func grounded(m ModeFigures) string {
	if m.GroundedRatio == nil {
		return "n/a"
	}
	mark := ""
	if m.GroundedBy == GroundedByEval {
		mark = "*"
	}
	return fmt.Sprintf("%.3f%s", *m.GroundedRatio, mark)
}

func optional(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *x)
}

// Seconds renders milliseconds as seconds.
func Seconds(ms float64) string { return fmt.Sprintf("%.2f", ms/1000) }
