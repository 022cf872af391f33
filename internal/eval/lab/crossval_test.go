package lab

import (
	"testing"

	"github.com/ragroute/ragroute/internal/eval"
)

func questionsOf(answerable ...bool) []eval.Question {
	gold := "doc.md"
	out := make([]eval.Question, len(answerable))
	for i, a := range answerable {
		out[i] = eval.Question{ID: string(rune('a' + i))}
		if a {
			out[i].GoldFile, out[i].GoldHeading = &gold, []string{"Doc"}
		}
	}
	return out
}

// Each half holds its share of the answerable and of the unanswerable
// questions, however they are ordered in the file.
func TestFoldsSplitEachKindInHalf(t *testing.T) {
	qs := questionsOf(true, true, true, true, false, false, true, false, false, true)
	f := folds(qs)
	for k, half := range f {
		var answerable, unanswerable int
		for _, i := range half {
			if qs[i].Answerable() {
				answerable++
			} else {
				unanswerable++
			}
		}
		if answerable != 3 || unanswerable != 2 {
			t.Errorf("half %d holds %d answerable and %d unanswerable questions, want 3 and 2", k, answerable, unanswerable)
		}
	}
	if len(f[0])+len(f[1]) != len(qs) {
		t.Errorf("folds %v lose questions", f)
	}
}

// A floor that fits one half perfectly is scored on the other half's
// questions, which it was not fitted on: the held-out rates are not the
// whole set's.
func TestCrossValidateFloorScoresEachHalfWithTheOthersThreshold(t *testing.T) {
	// folds alternate within each kind: answerable 0,1,2,3 → halves
	// {0,2} {1,3}; unanswerable 4,5,6,7 → {4,6} {5,7}.
	r := &run{questions: questionsOf(true, true, true, true, false, false, false, false)}
	// Half A's unanswerable questions score 0.1 and 0.2, half B's 0.5;
	// every answerable one 0.6 or more.
	values := []float64{0.9, 0.8, 0.7, 0.6, 0.1, 0.5, 0.2, 0.5}
	s := signal{thresholds: []float64{0.15, 0.3, 0.55, 0.65}, value: func(i int) float64 { return values[i] }}
	h := r.crossValidateFloor("floor", s, make([]bool, len(values)))
	// The whole set: 0.55 turns every unanswerable one away, no
	// answerable one.
	if h.Whole != "0.55" || h.WholeRates.NotFound != 1 || h.WholeRates.AnswerableDropped != 0 {
		t.Errorf("whole set: %s, %+v; want 0.55 turning all 4 away, none answerable", h.Whole, *h.WholeRates)
	}
	// Half A fits 0.3 (its 0.1 and 0.2 below it), which catches none of
	// B's 0.5s; half B fits 0.55, which catches both of A's.
	if h.Fits != [2]string{"0.3", "0.55"} {
		t.Errorf("half fits %v, want [0.3 0.55]", h.Fits)
	}
	if h.HeldRates.NotFound != 0.5 || h.HeldRates.AnswerableDropped != 0 {
		t.Errorf("held out %+v, want half the unanswerable turned away", *h.HeldRates)
	}
}
