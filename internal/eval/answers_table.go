package eval

import (
	"fmt"
	"strings"
)

// AnswersTable renders an answer-level report for a terminal.
func AnswersTable(r AnswersReport) string {
	var b strings.Builder
	if len(r.Modes) > 0 {
		fmt.Fprintf(&b, "%d questions (%d answerable, %d unanswerable), chat model %s, window %d / answer reserve %d tokens, threshold %.2f, fallbackBelow %.2f\n",
			r.Questions, r.Answerable, r.Unanswerable, r.Model, r.ContextTokens, r.AnswerReserve, r.Threshold, r.FallbackBelow)
		b.WriteString(modesTable(r.Modes))
	}
	if r.Curve != nil {
		b.WriteString(curveText(*r.Curve))
	}
	if len(r.Histogram) > 0 {
		b.WriteString("\nscores of the real answers' sentences (route's grounding events, first generative mode):\n")
		b.WriteString(histogramText(r.Histogram))
	}
	if len(r.Ratios) > 0 {
		b.WriteString("\nanswers by grounded ratio (first generative mode; gold cited: the answer cites the gold section):\n")
		for _, bin := range r.Ratios {
			fmt.Fprintf(&b, "  %4.2f–%4.2f  %3d answers, %3d gold cited\n", bin.From, bin.To, bin.Answers, bin.GoldCited)
		}
	}
	return b.String()
}

// modesTable renders one row of answer figures per mode, with their
// legend: the live route's evaluation prints its turns the same way.
func modesTable(modes []ModeFigures) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-17s %6s %9s %7s %7s %6s %6s %6s %6s %6s %9s %8s %8s %8s %4s\n", "mode", "turns", "grounded",
		"cite P", "cite R", "URL!", "links-", "NF un", "NF ans", "repl", "withheld", "TTFT p50", "TTFT p90", "total50", "err")
	for _, m := range modes {
		fmt.Fprintf(&b, "%-17s %6d %9s %7s %7.3f %6d %6d %6.2f %6.2f %6.2f %9s %8s %8s %8s %4d\n", m.Mode, m.Turns,
			grounded(m), optional(m.CitationPrecision), m.CitationRecall, m.UnsupportedURLTurns, m.LinksRemoved,
			m.NotFound, m.FalseNotFound, m.Replaced, fmt.Sprintf("%d/%d", m.Withheld, m.Sentences),
			seconds(m.TTFTP50), seconds(m.TTFTP90), seconds(m.TotalP50), m.Errors)
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

func seconds(ms float64) string { return fmt.Sprintf("%.2f", ms/1000) }

// curveText renders the calibration curve.
func curveText(c GroundingCurve) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\ngrounding threshold calibration: %d questions' packed fragments; pass = score ≥ threshold and nothing invented\n", c.Questions)
	fmt.Fprintf(&b, "%-38s", "threshold")
	for _, p := range c.Points {
		fmt.Fprintf(&b, " %5.2f", p.Threshold)
	}
	b.WriteString("\n")
	rows := []struct {
		name string
		n    int
		rate func(GroundingPoint) float64
	}{
		{"(a) supported, paraphrased", c.Supported, func(p GroundingPoint) float64 { return p.Supported }},
		{"(b) unsupported, on topic", c.Unsupported, func(p GroundingPoint) float64 { return p.Unsupported }},
		{"(c) invented flag/number/URL", c.Invented, func(p GroundingPoint) float64 { return p.Invented }},
	}
	for _, row := range rows {
		fmt.Fprintf(&b, "%-38s", fmt.Sprintf("%s (%d)", row.name, row.n))
		for _, p := range c.Points {
			fmt.Fprintf(&b, " %5.2f", row.rate(p))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "invented identifiers named by the check: %.2f of (c)\n", c.InventedFlagged)
	if len(c.SupportedScores) > 0 {
		b.WriteString("\nscores of the synthetic sets:\n")
		fmt.Fprintf(&b, "%-12s %10s %12s\n", "score", "(a) supp.", "(b) unsupp.")
		for i, bin := range c.SupportedScores {
			u := c.UnsupportedScores[i]
			if bin.Sentences == 0 && u.Sentences == 0 {
				continue
			}
			fmt.Fprintf(&b, "%4.2f–%4.2f   %10d %12d\n", bin.From, bin.To, bin.Sentences, u.Sentences)
		}
	}
	return b.String()
}

// histogramText renders score bins that hold sentences.
func histogramText(bins []ScoreBin) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %9s %9s %10s\n", "score", "sentences", "invented", "supported")
	for _, bin := range bins {
		if bin.Sentences == 0 {
			continue
		}
		fmt.Fprintf(&b, "%4.2f–%4.2f   %9d %9d %10d\n", bin.From, bin.To, bin.Sentences, bin.Invented, bin.Supported)
	}
	return b.String()
}
