package live

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
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
