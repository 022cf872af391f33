package eval

import (
	"encoding/json"
	"testing"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// checked is a turn of an answerable (gold) or unanswerable question
// whose route's check reported score against threshold.
func checked(check string, score, threshold float64, answerable bool) TurnOutcome {
	o := TurnOutcome{Answerability: &turn.AnswerabilityReport{Check: check, Score: score, Threshold: threshold,
		Answerable: score >= threshold}}
	if answerable {
		file := "a.md"
		o.Question.GoldFile = &file
	}
	return o
}

// scored is one turn per score, answerable or not, coverage at 0.5.
func scored(answerable bool, scores ...float64) []TurnOutcome {
	var out []TurnOutcome
	for _, s := range scores {
		out = append(out, checked("coverage", s, 0.5, answerable))
	}
	return out
}

// twenty are the scores 1.00, 0.95, …, 0.05: out of order, as questions
// come (the calibration sorts them).
func twenty() []float64 {
	var out []float64
	for i := 20; i >= 1; i-- {
		out = append(out, float64(i)/20)
	}
	return out
}

func TestCalibrateAnswerability(t *testing.T) {
	unchecked := TurnOutcome{Err: "turn: route down"}
	notPacked := TurnOutcome{Question: Question{GoldFile: new(string)}} // nothing packed: no check ran
	cases := []struct {
		name     string
		outcomes []TurnOutcome
		alpha    float64
		// want: "" for nil, else the calibration as JSON.
		want string
	}{
		{"no turn ran a check: nothing to calibrate", []TurnOutcome{unchecked, notPacked}, 0.05, ""},
		// n = 20, α 0.05: k = ⌊0.05 × 21⌋ = 1, the least score; none below it.
		{"twenty answerable at 0.05: the least score", scored(true, twenty()...), 0.05,
			`{"check":"coverage","threshold":0.5,"alpha":0.05,"answerableScored":20,"recommended":0.05,"expectedAnswerableRefused":0}`},
		// α 0.2: k = ⌊0.2 × 21⌋ = 4, the fourth smallest (0.20); three below.
		{"twenty answerable at 0.2: the fourth smallest", scored(true, twenty()...), 0.2,
			`{"check":"coverage","threshold":0.5,"alpha":0.2,"answerableScored":20,"recommended":0.2,"expectedAnswerableRefused":0.15}`},
		// α 0.1, n = 9: k = 1, the least of scores in any order.
		{"nine answerable at 0.1: the least score", scored(true, 0.3, 0.9, 0.6, 0.7, 0.8, 0.4, 0.5, 1, 0.2), 0.1,
			`{"check":"coverage","threshold":0.5,"alpha":0.1,"answerableScored":9,"recommended":0.2,"expectedAnswerableRefused":0}`},
		{"too few answerable questions: say so, recommend nothing", scored(true, twenty()[:18]...), 0.05,
			`{"check":"coverage","threshold":0.5,"alpha":0.05,"answerableScored":18,"message":"18 answerable questions scored: at least 19 are needed to promise that at most 0.05 of answerable questions are refused; nothing recommended"}`},
		// Ties: the recommended value is a score several questions share;
		// none of them is below it.
		{"ties at the rank", scored(true, 0.25, 0.5, 0.5, 0.5, 0.75, 0.75, 0.75, 1, 1, 1), 0.3,
			`{"check":"coverage","threshold":0.5,"alpha":0.3,"answerableScored":10,"recommended":0.5,"expectedAnswerableRefused":0.1}`},
		// The unanswerable ones below 0.2 are turned away: 2 of 4.
		{"the unanswerable share refused at the recommended value", append(scored(true, twenty()...), scored(false, 0, 0.1, 0.2, 0.9)...), 0.2,
			`{"check":"coverage","threshold":0.5,"alpha":0.2,"answerableScored":20,"unanswerableScored":4,"recommended":0.2,"expectedAnswerableRefused":0.15,"unanswerableRefused":0.5}`},
		{"turns without a check are left out and counted", append(scored(true, twenty()...), unchecked, notPacked,
			checked("model", 0.9, 0.5, true)), 0.05,
			`{"check":"coverage","threshold":0.5,"alpha":0.05,"answerableScored":20,"unchecked":3,"recommended":0.05,"expectedAnswerableRefused":0}`},
		// The route's threshold refused some (answerable false): their
		// scores count all the same.
		{"calibrates whatever the route's threshold is", []TurnOutcome{checked("model", 0.2, 0.9, true), checked("model", 0.95, 0.9, true),
			checked("model", 0.4, 0.9, true), checked("model", 0.1, 0.9, false)}, 0.4,
			`{"check":"model","threshold":0.9,"alpha":0.4,"answerableScored":3,"unanswerableScored":1,"recommended":0.2,"expectedAnswerableRefused":0,"unanswerableRefused":1}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := CalibrateAnswerability(tc.outcomes, tc.alpha)
			got := ""
			if c != nil {
				data, err := json.Marshal(c)
				if err != nil {
					t.Fatal(err)
				}
				got = string(data)
			}
			if got != tc.want {
				t.Errorf("calibration\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// The rank is ⌊α(n+1)⌋, also where the product is whole in decimals but
// not in floating point (0.072 × 375 = 26.999…), and the fewest
// questions that give one are ⌈1/α⌉ − 1.
func TestConformalRank(t *testing.T) {
	for _, tc := range []struct {
		n     int
		alpha float64
		want  int
	}{{18, 0.05, 0}, {19, 0.05, 1}, {38, 0.05, 1}, {39, 0.05, 2}, {100, 0.05, 5}, {9, 0.1, 1}, {8, 0.1, 0}, {3, 0.3, 1}, {2, 0.3, 0}, {0, 0.49, 0}, {1, 0.49, 0}, {2, 0.49, 1}, {374, 0.072, 27}} {
		if got := conformalRank(tc.n, tc.alpha); got != tc.want {
			t.Errorf("rank of %d at %g: %d, want %d", tc.n, tc.alpha, got, tc.want)
		}
	}
	for alpha, want := range map[float64]int{0.05: 19, 0.1: 9, 0.3: 3, 0.25: 3, 0.01: 99, 0.49: 2, 0.07: 14} {
		if got := answerablesNeeded(alpha); got != want || conformalRank(got, alpha) != 1 || conformalRank(got-1, alpha) != 0 {
			t.Errorf("%g needs %d answerable questions, want %d", alpha, got, want)
		}
	}
}
