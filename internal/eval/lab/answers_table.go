package lab

import (
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
)

// AnswersTable renders an answer-level report for a terminal.
func AnswersTable(r AnswersReport) string {
	var b strings.Builder
	b.WriteString(routeText(r.Route, r.Deviations))
	if len(r.Modes) > 0 {
		fmt.Fprintf(&b, "%d questions (%d answerable, %d unanswerable), chat model %s, window %d / answer reserve %d tokens, threshold %.2f, fallbackBelow %.2f\n",
			r.Questions, r.Answerable, r.Unanswerable, r.Model, r.ContextTokens, r.AnswerReserve, r.Threshold, r.FallbackBelow)
		b.WriteString(eval.ModesTable(r.Modes))
	}
	if len(r.Support) > 0 {
		b.WriteString(AgreementText(r.Support))
	}
	if r.Answerability != nil {
		b.WriteString(answerabilityText(*r.Answerability))
		b.WriteString(answerabilityRulesText(r.Answerability.Mode, r.AnswerabilityRules))
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
