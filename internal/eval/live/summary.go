package live

import (
	"fmt"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
)

// Summary is the one object a live evaluation writes (--json): what
// an operator reads back, so its fields stay stable. Figures a scope does
// not measure are absent, as is one with nothing to measure it on (no
// unanswerable question, no answer the route checked).
type Summary struct {
	Questions  int `json:"questions"`
	Answerable int `json:"answerable"`
	// Errors counts questions the route failed; each is scored as a miss.
	Errors int `json:"errors"`

	RecallAt1     *float64 `json:"recallAt1,omitempty"`
	RecallAt5     *float64 `json:"recallAt5,omitempty"`
	RecallAt10    *float64 `json:"recallAt10,omitempty"`
	MRR           *float64 `json:"mrr,omitempty"`
	NDCGAt10      *float64 `json:"ndcgAt10,omitempty"`
	FileRecallAt5 *float64 `json:"fileRecallAt5,omitempty"`
	// NotFoundOnUnanswerable is the share of unanswerable questions the
	// route answered not-found: by its turns where they ran (what a user
	// reads), else by its search returning nothing.
	NotFoundOnUnanswerable *float64 `json:"notFoundOnUnanswerable,omitempty"`

	GroundedRatio     *float64 `json:"groundedRatio,omitempty"`
	CitationPrecision *float64 `json:"citationPrecision,omitempty"`
	CitationRecall    *float64 `json:"citationRecall,omitempty"`

	// Answerability is the route's answerability threshold calibrated on
	// the turns' scores (scope answers or both, a route that runs the
	// check): the value to set for a chosen refusal rate of answerable
	// questions.
	Answerability *eval.Calibration `json:"answerability,omitempty"`

	// Latency of the searches, or of whole turns in scope answers.
	LatencyP50Ms float64   `json:"latencyP50Ms"`
	LatencyP95Ms float64   `json:"latencyP95Ms"`
	Scope        string    `json:"scope"`
	StartedAt    time.Time `json:"startedAt"`
	DurationMs   int64     `json:"durationMs"`
}

func (s *Summary) retrievalFigures(m eval.Metrics, unanswerable int) {
	s.RecallAt1, s.RecallAt5, s.RecallAt10 = &m.Recall1, &m.Recall5, &m.Recall10
	s.MRR, s.NDCGAt10, s.FileRecallAt5 = &m.MRR, &m.NDCG10, &m.FileRecall5
	if unanswerable > 0 {
		s.NotFoundOnUnanswerable = &m.NotFoundRate
	}
}

func (s *Summary) answerFigures(f eval.ModeFigures) {
	s.GroundedRatio, s.CitationPrecision = f.GroundedRatio, f.CitationPrecision
	if f.Answerable > 0 {
		s.CitationRecall = &f.CitationRecall
	}
	if f.Unanswerable > 0 {
		s.NotFoundOnUnanswerable = &f.NotFound
	}
}

// Threshold is the least a figure of the summary may be, by its JSON name.
type Threshold struct {
	Figure string
	Min    float64
}

// figure is the summary's figure by its JSON name, for thresholds; known
// is false for a name no threshold may gate.
func (s Summary) figure(name string) (value *float64, known bool) {
	switch name {
	case "recallAt5":
		return s.RecallAt5, true
	case "ndcgAt10":
		return s.NDCGAt10, true
	case "groundedRatio":
		return s.GroundedRatio, true
	case "notFoundOnUnanswerable":
		return s.NotFoundOnUnanswerable, true
	}
	return nil, false
}

// Below names each threshold the summary misses. A figure the run did not
// measure misses its threshold: a gate that cannot be checked does not
// pass.
func (s Summary) Below(thresholds []Threshold) []string {
	var out []string
	for _, t := range thresholds {
		value, known := s.figure(t.Figure)
		switch {
		case !known:
			out = append(out, fmt.Sprintf("%s: no such figure", t.Figure))
		case value == nil:
			out = append(out, fmt.Sprintf("%s not measured (minimum %.3f)", t.Figure, t.Min))
		case *value < t.Min:
			out = append(out, fmt.Sprintf("%s %.3f is below its minimum %.3f", t.Figure, *value, t.Min))
		}
	}
	return out
}
