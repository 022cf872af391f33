package controller

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// TestRunPhasesFollowsTheContract: a refused write is recorded and the
// phases go on; a broken reference is recorded and stops them; a failed
// read stops them and is returned.
func TestRunPhasesFollowsTheContract(t *testing.T) {
	broken := &referenceError{Reason: v1alpha1.ReasonSecretNotFound, Message: `Secret "llm" not found`}
	refused := &refusedWrite{errors.New("apply ingest Job docs-ingest-0123456789: exceeded quota")}
	unreadable := errors.New("get ConfigMap faq-md: the cache is not started")
	step := func(name string, err error) phase[*[]string] {
		return func(_ context.Context, ran *[]string) error {
			*ran = append(*ran, name)
			return err
		}
	}
	cases := []struct {
		name    string
		phases  []phase[*[]string]
		ran     []string
		out     phaseOutcome
		readErr error
	}{
		{"all run", []phase[*[]string]{step("a", nil), step("b", nil)}, []string{"a", "b"}, phaseOutcome{}, nil},
		{"a refused write goes on", []phase[*[]string]{step("a", refused), step("b", nil)}, []string{"a", "b"},
			phaseOutcome{applyErr: refused}, nil},
		{"a broken reference stops", []phase[*[]string]{step("a", broken), step("b", nil)}, []string{"a"},
			phaseOutcome{refErr: broken}, nil},
		{"a refused write, then a broken reference", []phase[*[]string]{step("a", refused), step("b", broken), step("c", nil)},
			[]string{"a", "b"}, phaseOutcome{refErr: broken, applyErr: refused}, nil},
		{"a failed read stops", []phase[*[]string]{step("a", unreadable), step("b", nil)}, []string{"a"},
			phaseOutcome{}, unreadable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ran []string
			out, err := runPhases(context.Background(), &ran, tc.phases...)
			if !slices.Equal(ran, tc.ran) {
				t.Errorf("ran %v, want %v", ran, tc.ran)
			}
			if !errors.Is(err, tc.readErr) || (err == nil) != (tc.readErr == nil) {
				t.Errorf("error %v, want %v", err, tc.readErr)
			}
			if out.refErr != tc.out.refErr || !errors.Is(out.applyErr, tc.out.applyErr) || (out.applyErr == nil) != (tc.out.applyErr == nil) {
				t.Errorf("outcome %+v, want %+v", out, tc.out)
			}
		})
	}
}
