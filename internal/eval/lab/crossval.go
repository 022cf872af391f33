package lab

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
)

// A choice fitted on the questions it is scored on flatters itself: the
// dev set's weights and thresholds carried over to unseen questions only
// partly. So every choice `make eval` makes is also made by 2-fold
// cross-validation: fitted on one half of the questions and scored on the
// other, both ways, the two held-out halves pooled.

// maxAnswerableDropped is the share of answerable questions a not-found
// floor may turn away while it is fitted.
const maxAnswerableDropped = 0.05

// folds splits the question indices in two, alternating within the
// answerable and within the unanswerable questions, so both halves hold
// their share of each.
func folds(questions []eval.Question) [2][]int {
	var out [2][]int
	var answerable, unanswerable int
	for i, q := range questions {
		n := &unanswerable
		if q.Answerable() {
			n = &answerable
		}
		out[*n%2] = append(out[*n%2], i)
		*n++
	}
	return out
}

// every is the index of every question.
func (r *run) every() []int {
	out := make([]int, len(r.questions))
	for i := range out {
		out[i] = i
	}
	return out
}

// HeldOut is one choice made on the whole set and by cross-validation.
type HeldOut struct {
	Choice string `json:"choice"`
	// Whole is the option fitted on every question; Fits are the options
	// each half chose.
	Whole string    `json:"whole_fit"`
	Fits  [2]string `json:"half_fits"`
	// For a ranking choice: the metrics of the whole-set fit on every
	// question, and of each half's fit on the other half, pooled.
	WholeMetrics *eval.Metrics `json:"whole_metrics,omitempty"`
	HeldMetrics  *eval.Metrics `json:"held_out_metrics,omitempty"`
	// For a not-found floor: the same as rates.
	WholeRates *CurvePoint `json:"whole_rates,omitempty"`
	HeldRates  *CurvePoint `json:"held_out_rates,omitempty"`
}

// option is one candidate of a ranking choice: its outcomes on every
// question.
type option struct {
	label    string
	outcomes []eval.Outcome
}

// crossValidateRanking picks the option with the best nDCG@10 (then
// recall@5; then the earliest, so list options in order of preference) on
// the whole set and on each half, and scores each half's pick on the other.
// It also returns the index of the whole set's pick.
func (r *run) crossValidateRanking(choice string, options []option) (HeldOut, int) {
	return r.crossValidatePick(choice, options, func(idx []int) int {
		best, bestM := -1, eval.Metrics{}
		for k, o := range options {
			m := r.scoreAt(idx, o.outcomes)
			if best < 0 || m.NDCG10 > bestM.NDCG10+1e-9 || (math.Abs(m.NDCG10-bestM.NDCG10) <= 1e-9 && m.Recall5 > bestM.Recall5+1e-9) {
				best, bestM = k, m
			}
		}
		return best
	})
}

// crossValidateCheapest picks the first option (list the cheapest first)
// whose nDCG@10 is within tolerance of the best option's, on the whole
// set and on each half, and scores each half's pick on the other: a
// cost cut that keeps the ranking.
func (r *run) crossValidateCheapest(choice string, options []option, tolerance float64) (HeldOut, int) {
	return r.crossValidatePick(choice, options, func(idx []int) int {
		scores := make([]float64, len(options))
		for k, o := range options {
			scores[k] = r.scoreAt(idx, o.outcomes).NDCG10
		}
		best := slices.Max(scores)
		return slices.IndexFunc(scores, func(s float64) bool { return s >= best-tolerance-1e-9 })
	})
}

// crossValidatePick runs a choice made by pick (the index of the option
// chosen on the questions at idx) on the whole set and by 2-fold
// cross-validation.
func (r *run) crossValidatePick(choice string, options []option, pick func(idx []int) int) (HeldOut, int) {
	all := r.every()
	h := HeldOut{Choice: choice}
	whole := pick(all)
	h.Whole = options[whole].label
	m := r.scoreAt(all, options[whole].outcomes)
	h.WholeMetrics = &m
	pooled := make([]eval.Outcome, len(r.questions))
	f := folds(r.questions)
	for k := range f {
		fit := pick(f[k])
		h.Fits[k] = options[fit].label
		for _, i := range f[1-k] {
			pooled[i] = options[fit].outcomes[i]
		}
	}
	held := r.scoreAt(all, pooled)
	h.HeldMetrics = &held
	return h, whole
}

// scoreAt scores the outcomes of the questions at idx.
func (r *run) scoreAt(idx []int, outcomes []eval.Outcome) eval.Metrics {
	qs, os := make([]eval.Question, len(idx)), make([]eval.Outcome, len(idx))
	for j, i := range idx {
		qs[j], os[j] = r.questions[i], outcomes[i]
	}
	return r.gold.Score(qs, os, r.tokens, r.intentOK)
}

// crossValidateFloor picks the threshold of a not-found signal that turns
// the most unanswerable questions away while dropping at most
// maxAnswerableDropped of the answerable ones (the lowest such threshold),
// on the whole set and on each half, and applies each half's to the other.
func (r *run) crossValidateFloor(choice string, s signal, hitAt5 []bool) HeldOut {
	all := r.every()
	pick := func(idx []int) float64 {
		best, bestNotFound := s.thresholds[0], -1.0
		for _, t := range s.thresholds {
			p := r.rates(idx, func(i int) bool { return s.value(i) < t }, hitAt5)
			if p.AnswerableDropped <= maxAnswerableDropped+1e-9 && p.NotFound > bestNotFound+1e-9 {
				best, bestNotFound = t, p.NotFound
			}
		}
		return best
	}
	h := HeldOut{Choice: choice}
	whole := pick(all)
	h.Whole = formatThreshold(whole)
	w := r.rates(all, func(i int) bool { return s.value(i) < whole }, hitAt5)
	w.Threshold = whole
	h.WholeRates = &w
	threshold := make([]float64, len(r.questions))
	f := folds(r.questions)
	for k := range f {
		fit := pick(f[k])
		h.Fits[k] = formatThreshold(fit)
		for _, i := range f[1-k] {
			threshold[i] = fit
		}
	}
	held := r.rates(all, func(i int) bool { return s.value(i) < threshold[i] }, hitAt5)
	h.HeldRates = &held
	return h
}

func formatThreshold(t float64) string { return fmt.Sprintf("%g", t) }

// rates says, over the questions at idx, what turning away those below
// says does: the unanswerable share turned into not-found and the
// answerable share lost.
func (r *run) rates(idx []int, below func(i int) bool, hitAt5 []bool) CurvePoint {
	var p CurvePoint
	var answerable, unanswerable float64
	for _, i := range idx {
		if r.questions[i].Answerable() {
			answerable++
		} else {
			unanswerable++
		}
		if !below(i) {
			continue
		}
		if !r.questions[i].Answerable() {
			p.NotFound++
			continue
		}
		p.AnswerableDropped++
		if hitAt5[i] {
			p.Recall5Lost++
		}
	}
	if unanswerable > 0 {
		p.NotFound /= unanswerable
	}
	if answerable > 0 {
		p.AnswerableDropped /= answerable
		p.Recall5Lost /= answerable
	}
	return p
}

// heldOutTable renders the cross-validated choices.
func heldOutTable(choices []HeldOut) string {
	if len(choices) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nchosen on the whole set, and by 2-fold cross-validation (each half's choice scored on the other half, pooled):\n")
	for _, h := range choices {
		fits := fmt.Sprintf("whole set %s; halves %s / %s", h.Whole, h.Fits[0], h.Fits[1])
		switch {
		case h.HeldMetrics != nil:
			fmt.Fprintf(&b, "%-44s nDCG@10 %.3f → held out %.3f, R@5 %.3f → %.3f  (%s)\n", h.Choice,
				h.WholeMetrics.NDCG10, h.HeldMetrics.NDCG10, h.WholeMetrics.Recall5, h.HeldMetrics.Recall5, fits)
		case h.HeldRates != nil:
			fmt.Fprintf(&b, "%-44s not found %.2f → held out %.2f, answerable dropped %.2f → %.2f, R@5 lost %.3f → %.3f  (%s)\n", h.Choice,
				h.WholeRates.NotFound, h.HeldRates.NotFound, h.WholeRates.AnswerableDropped, h.HeldRates.AnswerableDropped,
				h.WholeRates.Recall5Lost, h.HeldRates.Recall5Lost, fits)
		}
	}
	return b.String()
}
