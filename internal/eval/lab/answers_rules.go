package lab

import (
	"fmt"
	"math"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// The answerability check's rules replayed: each checked turn reports
// every signal the check read (coverage, the names missing from what was
// packed, the best packed fragment's relevance), so one run, with a route
// whose check refuses nothing, says what each rule and threshold would
// have refused. A rule that lets a turn through leaves it its own outcome
// (nothing packed, the model's not-found). Not replayed: the re-search a
// refusal triggers first on a live route.

// RuleFigures are one rule's not-found rates: fitted on the whole set
// and, held out, each half's fit scored on the other half.
type RuleFigures struct {
	Rule string `json:"rule"`
	// Whole is the setting fitted on the whole set; WithinBound false:
	// none refuses at most maxAnswerableDropped of the answerable
	// questions, and Whole is the one that refuses the fewest.
	Whole       string     `json:"whole_fit"`
	WithinBound bool       `json:"within_bound"`
	Fits        [2]string  `json:"half_fits"`
	Rates       CurvePoint `json:"whole_rates"`
	Held        CurvePoint `json:"held_out_rates"`
	// Intervals are the 95 % Wilson intervals of the whole fit's rates:
	// not found of the unanswerable, refused of the answerable.
	NotFoundInterval   [2]float64 `json:"notfound_95"`
	AnswerableInterval [2]float64 `json:"answerable_dropped_95"`
}

// ruleCandidate is one setting of a rule: its label and what it refuses.
type ruleCandidate struct {
	label   string
	refuses func(r *turn.AnswerabilityReport) bool
}

type answerabilityRule struct {
	name       string
	candidates []ruleCandidate
}

func missingNames(r *turn.AnswerabilityReport) bool { return len(r.MissingNames) > 0 }

func coverageBelow(t float64) func(*turn.AnswerabilityReport) bool {
	return func(r *turn.AnswerabilityReport) bool { return r.Coverage < t }
}

func relevanceBelow(t float64) func(*turn.AnswerabilityReport) bool {
	return func(r *turn.AnswerabilityReport) bool { return r.Relevance != nil && *r.Relevance < t }
}

// relevanceThresholds span a cross-encoder's probabilities, most of whose
// resolution is near 0.
var relevanceThresholds = []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5}

// answerabilityRules are the rules tried: each signal alone and names
// joined with each thresholded one.
func answerabilityRules() []answerabilityRule {
	either := func(a, b func(*turn.AnswerabilityReport) bool) func(*turn.AnswerabilityReport) bool {
		return func(r *turn.AnswerabilityReport) bool { return a(r) || b(r) }
	}
	rules := []answerabilityRule{{name: "names", candidates: []ruleCandidate{{"-", missingNames}}}}
	var coverage, namesCoverage, relevance, namesRelevance, all []ruleCandidate
	for _, t := range answerabilityThresholds() {
		label := formatThreshold(t)
		coverage = append(coverage, ruleCandidate{label, coverageBelow(t)})
		namesCoverage = append(namesCoverage, ruleCandidate{label, either(missingNames, coverageBelow(t))})
	}
	for _, t := range relevanceThresholds {
		label := formatThreshold(t)
		relevance = append(relevance, ruleCandidate{label, relevanceBelow(t)})
		namesRelevance = append(namesRelevance, ruleCandidate{label, either(missingNames, relevanceBelow(t))})
		for _, c := range answerabilityThresholds() {
			all = append(all, ruleCandidate{formatThreshold(c) + "/" + label, either(missingNames, either(coverageBelow(c), relevanceBelow(t)))})
		}
	}
	return append(rules,
		answerabilityRule{"coverage", coverage},
		answerabilityRule{"names or coverage", namesCoverage},
		answerabilityRule{"relevance", relevance},
		answerabilityRule{"names or relevance", namesRelevance},
		answerabilityRule{"names or coverage/relevance", all})
}

// answerabilityRuleFigures replays every rule over a mode's turns; nil
// when no turn reported its signals.
func answerabilityRuleFigures(outcomes []eval.TurnOutcome, questions []eval.Question) []RuleFigures {
	checked := false
	for _, o := range outcomes {
		checked = checked || o.Answerability != nil
	}
	if !checked {
		return nil
	}
	refused := func(i int, c ruleCandidate) bool {
		o := outcomes[i]
		if a := o.Answerability; a != nil && c.refuses(a) {
			return true
		}
		return o.Completed != nil && o.Completed.NotFound
	}
	all := make([]int, len(outcomes))
	for i := range all {
		all[i] = i
	}
	f := folds(questions)
	var out []RuleFigures
	for _, rule := range answerabilityRules() {
		// pick: the most unanswerable turned away within the bound; when
		// none is within it, the fewest answerable refused.
		pick := func(idx []int) (ruleCandidate, bool) {
			best, bestNotFound, fewest, fewestDropped := rule.candidates[0], -1.0, rule.candidates[0], 2.0
			for _, c := range rule.candidates {
				p := ruleRates(questions, idx, func(i int) bool { return refused(i, c) })
				if p.AnswerableDropped <= maxAnswerableDropped+1e-9 && p.NotFound > bestNotFound+1e-9 {
					best, bestNotFound = c, p.NotFound
				}
				if p.AnswerableDropped < fewestDropped-1e-9 {
					fewest, fewestDropped = c, p.AnswerableDropped
				}
			}
			if bestNotFound < 0 {
				return fewest, false
			}
			return best, true
		}
		whole, within := pick(all)
		fig := RuleFigures{Rule: rule.name, Whole: whole.label, WithinBound: within,
			Rates: ruleRates(questions, all, func(i int) bool { return refused(i, whole) })}
		byQuestion := make([]ruleCandidate, len(outcomes))
		for k := range f {
			fit, _ := pick(f[k])
			fig.Fits[k] = fit.label
			for _, i := range f[1-k] {
				byQuestion[i] = fit
			}
		}
		fig.Held = ruleRates(questions, all, func(i int) bool { return refused(i, byQuestion[i]) })
		un, ans := counts(questions)
		fig.NotFoundInterval = wilson(fig.Rates.NotFound, un)
		fig.AnswerableInterval = wilson(fig.Rates.AnswerableDropped, ans)
		out = append(out, fig)
	}
	return out
}

// ruleRates are the not-found share of the unanswerable questions at idx
// and the refused share of the answerable ones.
func ruleRates(questions []eval.Question, idx []int, refused func(int) bool) CurvePoint {
	var p CurvePoint
	var answerable, unanswerable float64
	for _, i := range idx {
		if questions[i].Answerable() {
			answerable++
			if refused(i) {
				p.AnswerableDropped++
			}
			continue
		}
		unanswerable++
		if refused(i) {
			p.NotFound++
		}
	}
	if unanswerable > 0 {
		p.NotFound /= unanswerable
	}
	if answerable > 0 {
		p.AnswerableDropped /= answerable
	}
	return p
}

func counts(questions []eval.Question) (unanswerable, answerable int) {
	for _, q := range questions {
		if q.Answerable() {
			answerable++
		} else {
			unanswerable++
		}
	}
	return unanswerable, answerable
}

// wilson is the 95 % Wilson score interval of a share p of n.
func wilson(p float64, n int) [2]float64 {
	if n == 0 {
		return [2]float64{0, 1}
	}
	const z = 1.96
	nf := float64(n)
	centre := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return [2]float64{max(0, centre-half), min(1, centre+half)}
}

// answerabilityRulesText renders the rules' figures.
func answerabilityRulesText(mode string, figures []RuleFigures) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nanswerability rules replayed (%s; answerable refused ≤ %.2f; thresholds coverage/relevance):\n", mode, maxAnswerableDropped)
	b.WriteString("  rule                           whole fit     NF un [95%]              NF ans [95%]             held out (fits)  NF un  NF ans\n")
	for _, f := range figures {
		if !f.WithinBound {
			f.Whole += " (none ≤)"
		}
		fmt.Fprintf(&b, "  %-30s %-12s  %.2f [%.2f–%.2f]   %.2f [%.2f–%.2f]   (%s / %s)  %.2f  %.2f\n", f.Rule, f.Whole,
			f.Rates.NotFound, f.NotFoundInterval[0], f.NotFoundInterval[1], f.Rates.AnswerableDropped, f.AnswerableInterval[0], f.AnswerableInterval[1],
			f.Fits[0], f.Fits[1], f.Held.NotFound, f.Held.AnswerableDropped)
	}
	return b.String()
}
