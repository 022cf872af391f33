package lab

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The grounding threshold's calibration curve: for each question's packed
// fragments, three synthetic sentence sets are scored with the route's own
// scorer (answer.ScoreSupport), and each threshold says how many of each
// would pass: (a) the fragments' own sentences lightly paraphrased, which
// should pass; (b) sentences of other documents the question found but did
// not pack, on topic but unsupported, which should not; (c) supported
// sentences with an invented flag, number or URL spliced in, which must
// not, whatever the threshold.

// perSet is how many sentences of each set a question contributes.
const perSet = 4

// GroundingPoint is one threshold's pass rates.
type GroundingPoint struct {
	Threshold   float64 `json:"threshold"`
	Supported   float64 `json:"supported_pass"`
	Unsupported float64 `json:"unsupported_pass"`
	Invented    float64 `json:"invented_pass"`
}

// GroundingCurve is the calibration curve and what it was measured on.
type GroundingCurve struct {
	Questions   int `json:"questions"`
	Supported   int `json:"supported_sentences"`
	Unsupported int `json:"unsupported_sentences"`
	Invented    int `json:"invented_sentences"`
	// InventedFlagged is the share of (c) whose spliced identifier the
	// check named.
	InventedFlagged float64          `json:"invented_flagged"`
	Points          []GroundingPoint `json:"points"`
	// Histograms of the three sets' scores.
	SupportedScores   []ScoreBin `json:"supported_scores"`
	UnsupportedScores []ScoreBin `json:"unsupported_scores"`
}

// ScoreBin counts sentence scores in [From, To).
type ScoreBin struct {
	From      float64 `json:"from"`
	To        float64 `json:"to"`
	Sentences int     `json:"sentences"`
	// Invented counts those with an identifier no fragment holds;
	// Supported those at or above the threshold without one.
	Invented  int `json:"invented"`
	Supported int `json:"supported"`
}

// curveThresholds are 0.30 … 0.70 in steps of 0.05.
func curveThresholds() []float64 {
	var out []float64
	for k := 0; k <= 8; k++ {
		out = append(out, math.Round((0.30+0.05*float64(k))*100)/100)
	}
	return out
}

// sentenceSets are one question's three synthetic sets.
type sentenceSets struct {
	supported, unsupported, invented []string
}

// groundingCurve scores the sets of every question whose turn packed
// fragments; questions no mode ran get an extractive turn for it.
func (a *answersRun) groundingCurve(ctx context.Context, outcomes map[string][]eval.TurnOutcome) (GroundingCurve, error) {
	var curve GroundingCurve
	var supported, unsupported, invented []answer.Grounding
	for i, q := range a.questions {
		fragments := a.packedFor(outcomes, i)
		if len(fragments) == 0 {
			o := a.runTurn(ctx, curveMode, q)
			if err := ctx.Err(); err != nil {
				return curve, fmt.Errorf("grounding curve: %w", err)
			}
			fragments = a.packedFragments(o)
		}
		if len(fragments) == 0 {
			continue
		}
		sets := buildSentenceSets(fragments, a.otherDocuments(q, fragments), i*perSet)
		all := append(append(append([]string{}, sets.supported...), sets.unsupported...), sets.invented...)
		if len(all) == 0 {
			continue
		}
		scoreCtx, cancel := context.WithTimeout(ctx, a.opts.TurnTimeout)
		scores, err := answer.ScoreSupport(scoreCtx, a.query, all, fragments)
		cancel()
		if err != nil {
			return curve, fmt.Errorf("grounding curve, question %s: %w", q.ID, err)
		}
		curve.Questions++
		n1, n2 := len(sets.supported), len(sets.supported)+len(sets.unsupported)
		supported, unsupported, invented = append(supported, scores[:n1]...), append(unsupported, scores[n1:n2]...),
			append(invented, scores[n2:]...)
	}
	return curveOf(curve, supported, unsupported, invented), nil
}

// curveOf fills the curve from the three sets' scores.
func curveOf(curve GroundingCurve, supported, unsupported, invented []answer.Grounding) GroundingCurve {
	curve.Supported, curve.Unsupported, curve.Invented = len(supported), len(unsupported), len(invented)
	flagged := 0
	for _, g := range invented {
		if len(g.Invented) > 0 {
			flagged++
		}
	}
	curve.InventedFlagged = eval.Share(flagged, len(invented))
	for _, t := range curveThresholds() {
		curve.Points = append(curve.Points, GroundingPoint{Threshold: t,
			Supported: passRate(supported, t), Unsupported: passRate(unsupported, t), Invented: passRate(invented, t)})
	}
	curve.SupportedScores = histogram(supported, answer.DefaultGroundingThreshold)
	curve.UnsupportedScores = histogram(unsupported, answer.DefaultGroundingThreshold)
	return curve
}

// passes is the route's rule: enough support and nothing invented.
func passes(g answer.Grounding, threshold float64) bool {
	return g.Score >= threshold && len(g.Invented) == 0
}

func passRate(gs []answer.Grounding, threshold float64) float64 {
	n := 0
	for _, g := range gs {
		if passes(g, threshold) {
			n++
		}
	}
	return eval.Share(n, len(gs))
}

// histogram bins scores by 0.05 from 0 to 1.
func histogram(gs []answer.Grounding, threshold float64) []ScoreBin {
	bins := make([]ScoreBin, 20)
	for i := range bins {
		bins[i].From, bins[i].To = math.Round(float64(i)*5)/100, math.Round(float64(i+1)*5)/100
	}
	for _, g := range gs {
		i := max(0, min(int(g.Score*20), len(bins)-1))
		bins[i].Sentences++
		if len(g.Invented) > 0 {
			bins[i].Invented++
		}
		if passes(g, threshold) {
			bins[i].Supported++
		}
	}
	return bins
}

// scoreHistogram bins the sentence scores the route reported for real
// answers.
func scoreHistogram(outcomes []eval.TurnOutcome, threshold float64) []ScoreBin {
	var gs []answer.Grounding
	for _, o := range outcomes {
		gs = append(gs, o.Groundings...)
	}
	if len(gs) == 0 {
		return nil
	}
	return histogram(gs, threshold)
}

// packedFor is what question i's turns packed, from the first mode that
// packed anything.
func (a *answersRun) packedFor(outcomes map[string][]eval.TurnOutcome, i int) []retrieval.Fragment {
	for _, mode := range append([]string{ModeExtractive}, AnswerModes()...) {
		if turns, ok := outcomes[mode]; ok && i < len(turns) {
			if fragments := a.packedFragments(turns[i]); len(fragments) > 0 {
				return fragments
			}
		}
	}
	return nil
}

// otherDocuments are the texts the question's searches ranked (each
// primitive's list, best first) from documents it did not pack: on
// topic, yet not what the answer may rest on.
func (a *answersRun) otherDocuments(q eval.Question, packed []retrieval.Fragment) []string {
	sources := map[string]bool{}
	for _, f := range packed {
		sources[f.Source] = true
	}
	lists := a.index.lists[q.Question]
	var out []string
	for rank := 0; ; rank++ {
		more := false
		for _, list := range lists {
			if rank >= len(list) {
				continue
			}
			more = true
			if h := list[rank]; !sources[h.Source] {
				sources[h.Source] = true // one text per document
				out = append(out, h.Text)
			}
		}
		if !more {
			return out
		}
	}
}

// buildSentenceSets draws the three sets from the packed fragments and
// the other documents' texts, deterministically; the paraphrases and
// inventions used start at the offset-th, so that every kind is used
// across questions.
func buildSentenceSets(packed []retrieval.Fragment, others []string, offset int) sentenceSets {
	var sets sentenceSets
	var text strings.Builder
	var own []string
	for _, f := range packed {
		text.WriteString(f.Title + "\n" + strings.Join(f.HeadingPath, "\n") + "\n" + f.SourceURI + "\n" + f.Text + "\n")
		own = append(own, candidateSentences(f.Text)...)
	}
	packedLower := strings.ToLower(text.String())
	for i, s := range spread(own, perSet) {
		sets.supported = append(sets.supported, paraphrase(s, offset+i))
		sets.invented = append(sets.invented, invent(s, offset+i, packedLower))
	}
	for _, other := range others {
		if len(sets.unsupported) == perSet {
			break
		}
		for _, s := range candidateSentences(other) {
			if !strings.Contains(packedLower, strings.ToLower(s)) {
				sets.unsupported = append(sets.unsupported, s)
				break
			}
		}
	}
	return sets
}

// spread picks n items spread evenly over xs.
func spread(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	out := make([]string, n)
	for i := range out {
		out[i] = xs[i*len(xs)/n]
	}
	return out
}

// candidateSentences are a Markdown text's prose sentences and list
// items of 6 to 40 words: no headings, code, tables or HTML.
func candidateSentences(text string) []string {
	var out []string
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inCode = !inCode
			continue
		}
		if inCode || t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "<") ||
			strings.HasPrefix(t, "!") || strings.HasPrefix(t, ">") {
			continue
		}
		t = strings.TrimLeft(t, "-*+ ")
		// Cut as the grounding check cuts the answers it scores.
		for _, s := range answer.Sentences(t) {
			s = strings.TrimSpace(s)
			words := len(strings.Fields(s))
			if words >= 6 && words <= 40 && len(retrieval.ContentWords(s)) >= 3 {
				out = append(out, s)
			}
		}
	}
	return out
}

// paraphrase rewords a sentence lightly, the i-th way: what a model does
// to a sentence it copies.
func paraphrase(s string, i int) string {
	words := strings.Fields(s)
	switch i % paraphrases {
	case 0:
		return "Note that " + lowerFirst(s)
	case 1:
		if c := strings.Index(s, ", "); c > 0 && c < len(s)/2 {
			return upperFirst(s[c+2:]) // the leading clause dropped
		}
		return upperFirst(dropLeadingStopwords(s))
	case 2:
		return strings.ToLower(s)
	case 3:
		return "In short, " + lowerFirst(s)
	case 4:
		// The first two thirds: a model that says less than its source.
		return twoThirds(words)
	case 5:
		// The clause after the first comma first.
		if c := strings.Index(s, ", "); c > 0 {
			return upperFirst(strings.TrimRight(s[c+2:], ".")) + ", " + lowerFirst(s[:c]) + "."
		}
		return "You can read that " + lowerFirst(s)
	case 6:
		// Telegraphic: the function words dropped.
		return upperFirst(strings.Join(retrieval.ContentWords(s), " ")) + "."
	default:
		return "Note that " + lowerFirst(twoThirds(words))
	}
}

// twoThirds is the first two thirds of a sentence's words, as a sentence.
func twoThirds(words []string) string {
	return strings.TrimRight(strings.Join(words[:max(4, 2*len(words)/3)], " "), ",;:.") + "."
}

// paraphrases is how many ways paraphrase has.
const paraphrases = 8

// inventions are what a model makes up: a flag, a number, a URL.
func inventions() []string {
	return []string{"with the flag --sync-jitter-seconds", "within 4711 seconds",
		"(see https://argo-cd.example.invalid/tuning)"}
}

// invent splices the i-th invention into s before its final punctuation,
// the next one if the fragments happen to hold it.
func invent(s string, i int, packedLower string) string {
	choices := inventions()
	add := choices[i%len(choices)]
	for k := 0; k < len(choices); k++ {
		c := choices[(i+k)%len(choices)]
		if id := identifierOf(c); !strings.Contains(packedLower, id) {
			add = c
			break
		}
	}
	body := strings.TrimRight(s, ".!?:;")
	return body + " " + add + s[len(body):]
}

// identifierOf is the invention's identifier, as the check looks for it.
func identifierOf(invention string) string {
	for _, w := range strings.Fields(invention) {
		w = strings.Trim(w, "()")
		if strings.ContainsFunc(w, unicode.IsDigit) || strings.HasPrefix(w, "--") || strings.Contains(w, "://") {
			return strings.ToLower(w)
		}
	}
	return invention
}

func lowerFirst(s string) string {
	if s == "" || (len(s) > 1 && unicode.IsUpper(rune(s[1]))) {
		return s // an acronym or a name keeps its case
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// dropLeadingStopwords drops the articles and pronouns a sentence starts
// with.
func dropLeadingStopwords(s string) string {
	words := strings.Fields(s)
	for len(words) > 3 {
		switch strings.ToLower(words[0]) {
		case "the", "a", "an", "this", "that", "it", "you", "if", "when":
			words = words[1:]
			continue
		}
		break
	}
	return strings.Join(words, " ")
}
