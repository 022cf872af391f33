package live

import (
	"fmt"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
)

// Table renders a live evaluation for a terminal, in the rows of
// `make eval` and `make eval-answers`.
func Table(r Report) string {
	var b strings.Builder
	s := r.Summary
	fmt.Fprintf(&b, "route %s, scope %s: %d questions (%d answerable), %d failed, in %s\n", r.URL, s.Scope, s.Questions, s.Answerable,
		s.Errors, (time.Duration(s.DurationMs) * time.Millisecond).Round(time.Millisecond))
	if r.metrics != nil {
		b.WriteString(eval.MetricsTable([]string{liveMode}, map[string]eval.Metrics{liveMode: *r.metrics}, func(string) string { return "" }))
		b.WriteString("A result holds the gold section when it names the gold heading path exactly, or holds at least half of the\n" +
			"section's text (with --corpus), or, without --corpus, is an enclosing section's chunk holding the gold heading's line\n" +
			"(a short section merged into its parent); notfound: unanswerable questions the search found nothing for.\n")
	}
	if r.answers != nil {
		b.WriteString(eval.ModesTable([]eval.ModeFigures{*r.answers}))
		b.WriteString("URL! here counts the platform prompt's URLs too: the evaluation cannot read the route's prompt.\n")
	}
	if c := s.Answerability; c != nil {
		b.WriteString(calibrationLine(*c))
	}
	what := "search"
	if s.Scope == ScopeAnswers {
		what = "turn"
	}
	fmt.Fprintf(&b, "latency of one %s: p50 %.1f ms, p95 %.1f ms\n", what, s.LatencyP50Ms, s.LatencyP95Ms)
	return b.String()
}

// calibrationLine says what the answerability calibration recommends.
func calibrationLine(c eval.Calibration) string {
	line := fmt.Sprintf("answerability check %s at threshold %g: ", c.Check, c.Threshold)
	if c.Recommended == nil {
		line += c.Message
	} else {
		line += fmt.Sprintf("recommended %g for alpha %g: refuses %.2f of the %d answerable questions scored",
			*c.Recommended, c.Alpha, *c.ExpectedAnswerableRefused, c.AnswerableScored)
		if c.UnanswerableRefused != nil {
			line += fmt.Sprintf(", %.2f of the %d unanswerable", *c.UnanswerableRefused, c.UnanswerableScored)
		}
	}
	return line + fmt.Sprintf("; not checked: %d\n", c.Unchecked)
}
