package eval

import (
	"fmt"
	"math"
	"slices"
)

// The answerability check's threshold, calibrated per corpus. A new
// corpus has answerable questions but rarely unanswerable ones, so the
// threshold is set from the answerable questions alone by split-conformal
// calibration: with their scores s_1..s_n and a target refusal rate α,
// the k-th smallest score, k = ⌊α(n+1)⌋, is the highest threshold under
// which a new answerable question from the same distribution is refused
// (scores below it) with probability at most k/(n+1) ≤ α. Every checked
// turn reports its score, the route's own threshold refusing it or not,
// so one run calibrates whatever threshold the route has now.

// DefaultCalibrationAlpha is the answerable questions' refusal rate the
// recommended threshold aims at when none is asked for; an alpha is below
// MaxCalibrationAlpha: a check that may refuse half of the questions it
// should answer is not a refusal rate worth promising.
const (
	DefaultCalibrationAlpha = 0.05
	MaxCalibrationAlpha     = 0.5
)

// Calibration is the answerability check's threshold calibrated on one
// run's turns. Its JSON is part of eval-route's summary, which a
// RouteEvaluation's operator reads into status under the same names.
type Calibration struct {
	// Check is the route's check (coverage or model) and Threshold its
	// threshold now, as the turns' answerability events reported them.
	Check     string  `json:"check"`
	Threshold float64 `json:"threshold"`
	// Alpha is the target share of answerable questions refused.
	Alpha float64 `json:"alpha"`
	// AnswerableScored and UnanswerableScored count the questions whose
	// turn ran the check; Unchecked those whose turn did not (nothing
	// packed, a failed turn, another check), left out of the calibration.
	AnswerableScored   int `json:"answerableScored"`
	UnanswerableScored int `json:"unanswerableScored,omitempty"`
	Unchecked          int `json:"unchecked,omitempty"`
	// Recommended is the k-th smallest answerable score; nil when too few
	// answerable questions were scored to promise Alpha (Message says how
	// many are needed).
	Recommended *float64 `json:"recommended,omitempty"`
	// ExpectedAnswerableRefused is the share of the scored answerable
	// questions below Recommended: what the route would have refused of
	// them. A new answerable question is refused with probability ≤ Alpha.
	ExpectedAnswerableRefused *float64 `json:"expectedAnswerableRefused,omitempty"`
	// UnanswerableRefused is the share of the scored unanswerable
	// questions below Recommended, when there are any.
	UnanswerableRefused *float64 `json:"unanswerableRefused,omitempty"`
	// Message says why nothing is recommended.
	Message string `json:"message,omitempty"`
}

// CalibrateAnswerability calibrates the answerability check's threshold
// on a run's turns at alpha (0 < alpha < MaxCalibrationAlpha; callers
// bound it). Nil when no turn ran a check: the route has none, so it has
// no scores to read.
// The check and threshold are the first checked turn's: a run measures
// one route config, and a turn of another check is counted as unchecked
// (its scores are on another scale).
func CalibrateAnswerability(outcomes []TurnOutcome, alpha float64) *Calibration {
	var c *Calibration
	var answerable, unanswerable []float64
	for _, o := range outcomes {
		a := o.Answerability
		if a == nil {
			continue
		}
		if c == nil {
			c = &Calibration{Check: a.Check, Threshold: a.Threshold, Alpha: alpha}
		}
		switch {
		case a.Check != c.Check:
		case o.Question.Answerable():
			answerable = append(answerable, a.Score)
		default:
			unanswerable = append(unanswerable, a.Score)
		}
	}
	if c == nil {
		return nil
	}
	c.AnswerableScored, c.UnanswerableScored = len(answerable), len(unanswerable)
	c.Unchecked = len(outcomes) - len(answerable) - len(unanswerable)
	k := conformalRank(len(answerable), alpha)
	if k == 0 {
		c.Message = fmt.Sprintf("%d answerable questions scored: at least %d are needed to promise that at most %g of answerable questions are refused; nothing recommended",
			len(answerable), answerablesNeeded(alpha), alpha)
		return c
	}
	slices.Sort(answerable)
	t := answerable[k-1]
	refused := Share(countBelow(answerable, t), len(answerable))
	c.Recommended, c.ExpectedAnswerableRefused = &t, &refused
	if len(unanswerable) > 0 {
		turnedAway := Share(countBelow(unanswerable, t), len(unanswerable))
		c.UnanswerableRefused = &turnedAway
	}
	return c
}

// conformalRank is k = ⌊alpha(n+1)⌋, the rank of the calibration score
// that bounds the refusal rate by alpha; 0 when n is too small. The
// tolerance keeps a product that should be whole (0.05 × 20) from
// flooring one below.
func conformalRank(n int, alpha float64) int {
	return int(math.Floor(alpha*float64(n+1) + 1e-9))
}

// answerablesNeeded is the fewest answerable scores that give a rank.
func answerablesNeeded(alpha float64) int {
	n := max(int(1/alpha)-2, 0)
	for conformalRank(n, alpha) == 0 {
		n++
	}
	return n
}

// countBelow counts the scores strictly below t: the questions a route
// with threshold t refuses (it answers at score ≥ threshold).
func countBelow(scores []float64, t float64) int {
	n := 0
	for _, s := range scores {
		if s < t {
			n++
		}
	}
	return n
}
