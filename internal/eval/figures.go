package eval

import (
	"math"
	"slices"
	"sort"
	"time"
)

// The answer figures of a mode's turns, from their digests.

// ModeFigures are one mode's answer-level figures.
type ModeFigures struct {
	Mode         string `json:"mode"`
	Turns        int    `json:"turns"`
	Errors       int    `json:"errors"`
	Answered     int    `json:"answered"`
	Answerable   int    `json:"answerable"`
	Unanswerable int    `json:"unanswerable"`
	// GroundedRatio is the mean grounded ratio over the answered turns
	// that have one (nil: none); GroundedBy says who measured it: the
	// route (turn.completed) or this evaluation with the route's scorer.
	GroundedRatio *float64 `json:"grounded_ratio"`
	GroundedTurns int      `json:"grounded_turns"`
	GroundedBy    string   `json:"grounded_by,omitempty"`
	// Citation precision: the share of cited markers (answerable
	// questions) whose fragment holds the gold section; recall: the share
	// of answerable questions whose gold section is cited.
	CitedMarkers      int      `json:"cited_markers"`
	CitationPrecision *float64 `json:"citation_precision"`
	CitationRecall    float64  `json:"citation_recall"`
	// UnsupportedURLTurns counts answers that show a URL no packed
	// fragment or the platform prompt holds; LinksRemoved sums what the
	// route's link guard removed.
	UnsupportedURLTurns int `json:"unsupported_url_turns"`
	LinksRemoved        int `json:"links_removed"`
	// NotFound is the share of unanswerable questions answered with the
	// not-found wording; FalseNotFound the share of answerable ones.
	NotFound      float64 `json:"notfound_unanswerable"`
	FalseNotFound float64 `json:"notfound_answerable"`
	// Replaced is the share of answered turns whose answer the fallback
	// replaced; Withheld counts the sentences strip withheld, of
	// Sentences checked.
	Replaced  float64 `json:"replaced"`
	Withheld  int     `json:"withheld_sentences"`
	Sentences int     `json:"checked_sentences"`
	// Time to the first delta over answered turns, and the whole turn.
	TTFTP50  float64 `json:"ttft_p50_ms"`
	TTFTP90  float64 `json:"ttft_p90_ms"`
	TotalP50 float64 `json:"total_p50_ms"`
}

// Who measured a mode's grounded ratio.
const (
	GroundedByRoute = "route"
	GroundedByEval  = "eval (answer.ScoreSupport)"
)

// Figures scores one mode's turns.
func Figures(mode string, outcomes []TurnOutcome, gold Gold) ModeFigures {
	f := ModeFigures{Mode: mode, Turns: len(outcomes)}
	var ratios []float64
	var ttft, total []time.Duration
	var answerable, unanswerable, notFound, falseNotFound, recalled, hits, replaced int
	for _, o := range outcomes {
		if o.Completed == nil {
			f.Errors++
			continue
		}
		c := o.Completed
		total = append(total, o.Total)
		f.LinksRemoved += c.LinksRemoved
		f.Withheld += c.Withheld
		f.Sentences += len(o.Groundings)
		if o.Question.Answerable() {
			answerable++
			if c.NotFound {
				falseNotFound++
			}
			n, h := CitedHits(o, gold)
			f.CitedMarkers += n
			hits += h
			if h > 0 {
				recalled++
			}
		} else {
			unanswerable++
			if c.NotFound {
				notFound++
			}
		}
		if c.NotFound {
			continue
		}
		f.Answered++
		if c.AnswerReplaced {
			replaced++
		}
		if o.TTFT >= 0 {
			ttft = append(ttft, o.TTFT)
		}
		switch {
		case c.GroundedRatio != nil:
			ratios = append(ratios, *c.GroundedRatio)
			f.GroundedBy = GroundedByRoute
		case o.Checked != nil:
			ratios = append(ratios, *o.Checked)
			if f.GroundedBy == "" {
				f.GroundedBy = GroundedByEval
			}
		}
		if len(UnsupportedURLs(o.Shown, o.Allowed)) > 0 {
			f.UnsupportedURLTurns++
		}
	}
	f.Answerable, f.Unanswerable = answerable, unanswerable
	if len(ratios) > 0 {
		m := Mean(ratios)
		f.GroundedRatio, f.GroundedTurns = &m, len(ratios)
	}
	if f.CitedMarkers > 0 {
		p := float64(hits) / float64(f.CitedMarkers)
		f.CitationPrecision = &p
	}
	f.CitationRecall = Share(recalled, answerable)
	f.NotFound, f.FalseNotFound = Share(notFound, unanswerable), Share(falseNotFound, answerable)
	f.Replaced = Share(replaced, f.Answered)
	f.TTFTP50, f.TTFTP90 = PercentileMillis(ttft, 0.5), PercentileMillis(ttft, 0.9)
	f.TotalP50 = PercentileMillis(total, 0.5)
	return f
}

// Share is n of of as a fraction; 0 of nothing.
func Share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// Mean is the mean of xs (NaN of none).
func Mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// PercentileMillis is the nearest-rank p-th percentile in milliseconds
// (0 for none).
func PercentileMillis(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return float64(sorted[rank].Microseconds()) / 1000
}

// RatioBin counts answers whose grounded ratio is in [From, To) (the last
// bin includes 1), and those of them that cite the gold section.
type RatioBin struct {
	From      float64 `json:"from"`
	To        float64 `json:"to"`
	Answers   int     `json:"answers"`
	GoldCited int     `json:"gold_cited"`
}

// RatioHistogram bins the answered turns' grounded ratios by quarter:
// what a fallbackBelow at each edge would replace.
func RatioHistogram(outcomes []TurnOutcome, gold Gold) []RatioBin {
	bins := []RatioBin{{From: 0, To: 0.25}, {From: 0.25, To: 0.5}, {From: 0.5, To: 0.75}, {From: 0.75, To: 1}}
	found := false
	for _, o := range outcomes {
		if !o.Answered() || o.Completed.GroundedRatio == nil {
			continue
		}
		found = true
		i := min(int(*o.Completed.GroundedRatio*4), len(bins)-1)
		bins[i].Answers++
		if _, hits := CitedHits(o, gold); hits > 0 {
			bins[i].GoldCited++
		}
	}
	if !found {
		return nil
	}
	return bins
}
