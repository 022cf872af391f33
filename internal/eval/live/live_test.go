package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/turn"
)

func TestThresholdsNameWhatIsBelowOrUnmeasured(t *testing.T) {
	recall, notFound := 0.8, 0.5
	s := Summary{RecallAt5: &recall, NotFoundOnUnanswerable: &notFound}
	got := s.Below([]Threshold{{"recallAt5", 0.9}, {"notFoundOnUnanswerable", 0.5}, {"groundedRatio", 0.7}})
	want := []string{"recallAt5 0.800 is below its minimum 0.900", "groundedRatio not measured (minimum 0.700)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("below: %q, want %q", got, want)
	}
	if got := s.Below([]Threshold{{"recallAt5", 0.8}}); len(got) != 0 {
		t.Errorf("a figure at its minimum passes: %q", got)
	}
}

func TestEncodeResultsCutsFromTheEnd(t *testing.T) {
	results := make([]Result, 20)
	for i := range results {
		results[i] = Result{ID: "q" + strings.Repeat("x", i), Question: strings.Repeat("why ", 20), TopSources: []string{}}
	}
	data, err := EncodeResults(results, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var got Results
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(data) > 1000 || got.Cut == 0 || got.Cut+len(got.Results) != 20 || got.Results[0].ID != "q" {
		t.Errorf("%d bytes, kept %d, cut %d", len(data), len(got.Results), got.Cut)
	}
	if _, err := EncodeResults(results, 10); err == nil {
		t.Error("a cap below the envelope encoded")
	}
}

func TestRetryAfter(t *testing.T) {
	for value, want := range map[string]time.Duration{"3": 3 * time.Second, "": time.Second, "soon": time.Second, "0": time.Second, "3600": maxRetryWait} {
		if got := retryAfter(value); got != want {
			t.Errorf("Retry-After %q: %s, want %s", value, got, want)
		}
	}
}

// TestAnswersCalibrateTheAnswerabilityThreshold: the turns' answerability
// scores reach the summary, at the run's alpha, and its table says what
// to set; a failed question counts as unchecked; retrieval runs no turns,
// so it calibrates nothing; an alpha out of bounds is refused.
func TestAnswersCalibrateTheAnswerabilityThreshold(t *testing.T) {
	file := "a.md"
	var questions []eval.Question
	var got []liveQuestion
	for i := range 10 {
		q := eval.Question{ID: fmt.Sprintf("q%d", i), Question: "why?", GoldFile: &file, GoldHeading: []string{"A"}}
		if i == 9 {
			q.GoldFile, q.GoldHeading = nil, nil
		}
		questions = append(questions, q)
		score := float64(i) / 10 // the unanswerable one scores 0.9
		got = append(got, liveQuestion{turn: eval.TurnOutcome{Question: q, Completed: &turn.Completed{NotFound: score < 0.5},
			Answerability: &turn.AnswerabilityReport{Check: "coverage", Score: score, Threshold: 0.5, Answerable: score >= 0.5}}})
	}
	got[0] = liveQuestion{err: errors.New("turn: 502")}
	opts := Options{Questions: questions, Source: "docs", Scope: ScopeAnswers, CalibrationAlpha: 0.3}
	report := scoreLive(opts, eval.GoldByPath("docs", questions), got)
	c := report.Summary.Answerability
	// Eight answerable scores 0.1…0.8: k = ⌊0.3 × 9⌋ = 2, the second, 0.2.
	if c == nil || c.AnswerableScored != 8 || c.UnanswerableScored != 1 || c.Unchecked != 1 || c.Alpha != 0.3 ||
		c.Recommended == nil || *c.Recommended != 0.2 || *c.ExpectedAnswerableRefused != 1.0/8 || *c.UnanswerableRefused != 0 {
		t.Fatalf("calibration %+v", c)
	}
	if table := Table(report); !strings.Contains(table, "answerability check coverage at threshold 0.5: recommended 0.2 for alpha 0.3: refuses 0.12 of the 8 answerable questions scored, 0.00 of the 1 unanswerable; not checked: 1") {
		t.Errorf("table:\n%s", table)
	}
	opts.CalibrationAlpha = 0
	if c := scoreLive(opts, eval.GoldByPath("docs", questions), got).Summary.Answerability; c == nil || c.Alpha != eval.DefaultCalibrationAlpha || c.Recommended != nil {
		t.Errorf("default alpha with 8 answerable scores: %+v", c)
	}
	opts.Scope = ScopeRetrieval
	if c := scoreLive(opts, eval.GoldByPath("docs", questions), got).Summary.Answerability; c != nil {
		t.Errorf("retrieval calibrated: %+v", c)
	}
	for _, alpha := range []float64{-0.1, 0.5} {
		opts := Options{Questions: questions, Scope: ScopeAnswers, MaxConcurrent: 1, Timeout: time.Second, CalibrationAlpha: alpha}
		if err := checkOptions(opts); err == nil || !strings.Contains(err.Error(), "calibration alpha") {
			t.Errorf("alpha %g: %v", alpha, err)
		}
	}
}
