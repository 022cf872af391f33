package controller

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/eval/live"
)

// The operator reads a run's figures as the eval-route summary wrote
// them: every figure the summary has lands in status under its name and
// with its value, the answerability calibration's too (the two types are
// one JSON contract, one on each side of the API).
func TestEvaluationFiguresReadEverySummaryFigure(t *testing.T) {
	one := ptr.To(0.5)
	summary := live.Summary{Questions: 5, Answerable: 4, Errors: 1, RecallAt1: one, RecallAt5: one, RecallAt10: one, MRR: one,
		NDCGAt10: one, FileRecallAt5: one, NotFoundOnUnanswerable: one, GroundedRatio: one, CitationPrecision: one, CitationRecall: one,
		LatencyP50Ms: 1, LatencyP95Ms: 2,
		Answerability: &eval.Calibration{Check: "coverage", Threshold: 0.5, Alpha: 0.05, AnswerableScored: 40, UnanswerableScored: 9,
			Unchecked: 2, Recommended: ptr.To(0.43), ExpectedAnswerableRefused: ptr.To(0.025), UnanswerableRefused: one, Message: "m"}}
	data, err := json.Marshal(summary)
	if err != nil {
		t.Fatal(err)
	}
	var figures v1alpha1.EvaluationFigures
	if err := json.Unmarshal(data, &figures); err != nil {
		t.Fatal(err)
	}
	back, _ := json.Marshal(figures)
	var wrote, kept map[string]any
	_ = json.Unmarshal(data, &wrote)
	_ = json.Unmarshal(back, &kept)
	for _, run := range []string{"scope", "startedAt", "durationMs"} { // the run's, not a figure
		delete(wrote, run)
	}
	if got, want := slices.Sorted(maps.Keys(kept)), slices.Sorted(maps.Keys(wrote)); !slices.Equal(got, want) {
		t.Errorf("status keeps %v of the summary's %v", got, want)
	}
	if !reflect.DeepEqual(kept, wrote) {
		t.Errorf("status reads\n%v\nof the summary's\n%v", kept, wrote)
	}
}
