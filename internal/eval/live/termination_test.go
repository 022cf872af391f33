package live

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestEncodeTerminationFitsAndKeepsMissesFirst: with many long misses the
// message stays under the kubelet's 4 KiB, keeps the summary whole, lists
// misses only, and counts what it cut.
func TestEncodeTerminationFitsAndKeepsMissesFirst(t *testing.T) {
	recall := 0.5
	report := Report{Summary: Summary{Questions: 200, Answerable: 180, RecallAt5: &recall, Scope: ScopeBoth}}
	for i := range 200 {
		report.Results = append(report.Results, Result{
			ID: fmt.Sprintf("q%03d", i), Question: strings.Repeat("é", 300), Answerable: true, Miss: i < 100,
			TopSources: []string{"handbook/a.md › A", "handbook/b.md › B"}, Error: strings.Repeat("x", 500),
		})
	}
	data, err := EncodeTermination(report, TerminationMessageMax)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > TerminationMessageMax {
		t.Fatalf("message is %d bytes, over %d", len(data), TerminationMessageMax)
	}
	var got Termination
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if got.Summary.Questions != 200 || got.Summary.RecallAt5 == nil || *got.Summary.RecallAt5 != 0.5 {
		t.Errorf("summary = %+v", got.Summary)
	}
	if got.Misses.Questions != 100 || got.Misses.Cut != 100-len(got.Misses.Results) || len(got.Misses.Results) == 0 {
		t.Errorf("misses: questions %d, cut %d, kept %d", got.Misses.Questions, got.Misses.Cut, len(got.Misses.Results))
	}
	for _, r := range got.Misses.Results {
		if !r.Miss || len(r.Question) > terminationQuestionMax || len(r.TopSources) != 1 {
			t.Errorf("miss not shortened: %+v", r)
		}
	}
}
