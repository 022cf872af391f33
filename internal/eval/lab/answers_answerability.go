package lab

import (
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
)

// The answerability check's threshold, read off one mode's turns: each
// turn that ran the check reports its score, so every threshold's
// not-found rates follow from one run (with the threshold at 1 each turn
// stops after the check). A turn that never ran it (nothing packed, a
// floor) keeps its own outcome.

// AnswerabilityCurve is the check's not-found rates by threshold, and the
// threshold chosen by 2-fold cross-validation.
type AnswerabilityCurve struct {
	Mode   string       `json:"mode"`
	Check  string       `json:"check"`
	Asked  int          `json:"asked"`
	Points []CurvePoint `json:"points"`
	// Chosen: the threshold that turns away the most unanswerable
	// questions while refusing at most maxAnswerableDropped of the
	// answerable ones, fitted on the whole set and on each half.
	Chosen HeldOut `json:"chosen"`
}

// answerabilityThresholds are the thresholds the curve tries.
func answerabilityThresholds() []float64 {
	var out []float64
	for i := 1; i < 20; i++ {
		out = append(out, float64(i)/20)
	}
	return append([]float64{0.01, 0.02}, out...)
}

// answerabilityCurve is nil when no turn asked.
func answerabilityCurve(mode string, outcomes []eval.TurnOutcome, questions []eval.Question) *AnswerabilityCurve {
	c := &AnswerabilityCurve{Mode: mode}
	for _, o := range outcomes {
		if o.Answerability != nil {
			c.Asked++
			c.Check = o.Answerability.Check
		}
	}
	if c.Asked == 0 {
		return nil
	}
	// A turn the route's own threshold refused never reached the model:
	// above that score it counts as answered.
	notFoundAt := func(i int, t float64) bool {
		o := outcomes[i]
		if a := o.Answerability; a != nil && (a.Score < t || !a.Answerable) {
			return a.Score < t
		}
		return o.Completed != nil && o.Completed.NotFound
	}
	rates := func(idx []int, threshold func(int) float64) CurvePoint {
		return ruleRates(questions, idx, func(i int) bool { return notFoundAt(i, threshold(i)) })
	}
	pick := func(idx []int) float64 {
		best, bestNotFound := 0.0, -1.0
		for _, t := range answerabilityThresholds() {
			p := rates(idx, func(int) float64 { return t })
			if p.AnswerableDropped <= maxAnswerableDropped+1e-9 && p.NotFound > bestNotFound+1e-9 {
				best, bestNotFound = t, p.NotFound
			}
		}
		return best
	}
	all := make([]int, len(outcomes))
	for i := range all {
		all[i] = i
	}
	for _, t := range answerabilityThresholds() {
		p := rates(all, func(int) float64 { return t })
		p.Threshold = t
		c.Points = append(c.Points, p)
	}
	c.Chosen.Choice = "answer.answerability threshold"
	whole := pick(all)
	w := rates(all, func(int) float64 { return whole })
	w.Threshold = whole
	c.Chosen.Whole, c.Chosen.WholeRates = formatThreshold(whole), &w
	threshold := make([]float64, len(outcomes))
	f := folds(questions)
	for k := range f {
		fit := pick(f[k])
		c.Chosen.Fits[k] = formatThreshold(fit)
		for _, i := range f[1-k] {
			threshold[i] = fit
		}
	}
	held := rates(all, func(i int) float64 { return threshold[i] })
	c.Chosen.HeldRates = &held
	return c
}

// answerabilityText renders the curve.
func answerabilityText(c AnswerabilityCurve) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nanswerability check %s (%s, %d turns checked): not found by threshold\n", c.Check, c.Mode, c.Asked)
	b.WriteString("     threshold   NF unanswerable   NF answerable\n")
	for _, p := range c.Points {
		fmt.Fprintf(&b, "%14.2f   %15.2f   %13.2f\n", p.Threshold, p.NotFound, p.AnswerableDropped)
	}
	h := c.Chosen
	fmt.Fprintf(&b, "chosen (answerable refused ≤ %.2f): whole set %s: NF un %.2f, NF ans %.2f; held-out halves (%s / %s): NF un %.2f, NF ans %.2f\n",
		maxAnswerableDropped, h.Whole, h.WholeRates.NotFound, h.WholeRates.AnswerableDropped, h.Fits[0], h.Fits[1],
		h.HeldRates.NotFound, h.HeldRates.AnswerableDropped)
	if h.WholeRates.AnswerableDropped > maxAnswerableDropped+1e-9 {
		fmt.Fprintf(&b, "no threshold keeps the answerable refused within %.2f: the model itself said not found for %.2f of them\n",
			maxAnswerableDropped, h.WholeRates.AnswerableDropped)
	}
	return b.String()
}
