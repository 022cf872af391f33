package lab

import (
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
)

// Curve says what one not-found signal would do at each threshold: the
// share of unanswerable questions turned into the honest not-found, and
// what answerable questions would lose.
type Curve struct {
	Signal string       `json:"signal"`
	Points []CurvePoint `json:"points"`
}

// CurvePoint is one threshold of a curve.
type CurvePoint struct {
	Threshold float64 `json:"threshold"`
	NotFound  float64 `json:"notfound_rate"`
	// AnswerableDropped: answerable questions that would get the not-found.
	AnswerableDropped float64 `json:"answerable_dropped"`
	// Recall5Lost: answerable questions with the gold in the top 5 that
	// would get the not-found instead.
	Recall5Lost float64 `json:"recall@5_lost"`
}

// signal is one question's value of a not-found signal: below the
// threshold means not found.
type signal struct {
	name       string
	thresholds []float64
	value      func(i int) float64
}

// sweep evaluates a signal at each threshold.
func (r *run) sweep(s signal, hitAt5 []bool) Curve {
	c := Curve{Signal: s.name}
	all := r.every()
	for _, t := range s.thresholds {
		p := r.rates(all, func(i int) bool { return s.value(i) < t }, hitAt5)
		p.Threshold = t
		c.Points = append(c.Points, p)
	}
	return c
}

func steps(from, to, step float64) []float64 {
	var out []float64
	for v := from; v <= to+step/2; v += step {
		out = append(out, v)
	}
	return out
}

// curveTable renders the curves under the ablation table.
func curveTable(curves []Curve) string {
	var b strings.Builder
	for _, c := range curves {
		fmt.Fprintf(&b, "\nnot found when %s is below:\n%-28s", c.Signal, "threshold")
		for _, p := range c.Points {
			fmt.Fprintf(&b, " %5.2f", p.Threshold)
		}
		for _, row := range []struct {
			name string
			get  func(CurvePoint) float64
		}{
			{"unanswerable → not found", func(p CurvePoint) float64 { return p.NotFound }},
			{"answerable dropped", func(p CurvePoint) float64 { return p.AnswerableDropped }},
			{"recall@5 lost", func(p CurvePoint) float64 { return p.Recall5Lost }},
		} {
			fmt.Fprintf(&b, "\n%-28s", row.name)
			for _, p := range c.Points {
				fmt.Fprintf(&b, " %5.2f", row.get(p))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// notFoundCurves sweeps each signal over the route body's searches.
func (r *run) notFoundCurves(route []eval.Outcome) []Curve {
	hitAt5 := r.hitAt5(route)
	return []Curve{
		r.sweep(signal{name: "the best candidate's similarity (cosine)", thresholds: steps(0.2, 0.95, 0.05),
			value: func(i int) float64 { return route[i].Confidence.Similarity }}, hitAt5),
		r.sweep(signal{name: "the best candidate's similarity in sigmas over the background", thresholds: steps(0, 5, 0.5),
			value: func(i int) float64 { return r.sigmas(route[i].Confidence.Similarity) }}, hitAt5),
		r.sweep(signal{name: "the agreement of dense and lexical search", thresholds: steps(0, 0.6, 0.1),
			value: func(i int) float64 { return route[i].Confidence.Agreement }}, hitAt5),
		r.sweep(signal{name: "the best candidate's lead over the next nine, in sigmas", thresholds: steps(0, 1.2, 0.1),
			value: func(i int) float64 { return r.inSigmas(route[i].Confidence.Standout) }}, hitAt5),
		r.sweep(confidenceSignal(route), hitAt5),
	}
}

// confidenceSignal is retrieval.minConfidence's signal over the route
// body's searches.
func confidenceSignal(route []eval.Outcome) signal {
	return signal{name: "the confidence score (retrieval.minConfidence)", thresholds: steps(2, 8, 0.25),
		value: func(i int) float64 { return deref(route[i].Confidence.Score) }}
}

// hitAt5 says, per question, whether an answerable question has the gold
// in the top 5.
func (r *run) hitAt5(outcomes []eval.Outcome) []bool {
	out := make([]bool, len(r.questions))
	for i, q := range r.questions {
		rank := r.gold.FirstHit(outcomes[i].Units, q)
		out[i] = q.Answerable() && rank > 0 && rank <= 5
	}
	return out
}

// sigmas expresses a similarity in standard deviations over the
// embedder's background.
func (r *run) sigmas(similarity float64) float64 {
	return r.inSigmas(similarity - r.background.Mean)
}

// inSigmas expresses a difference of similarities in the background's
// standard deviations.
func (r *run) inSigmas(difference float64) float64 {
	if r.background.StdDev == 0 {
		return 0
	}
	return difference / r.background.StdDev
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
