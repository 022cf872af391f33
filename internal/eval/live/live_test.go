package live

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route"
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

func TestReadEventsDecodesThePayloadsDigestReads(t *testing.T) {
	stream := ": keep-alive\n\n" +
		"id: 1\nevent: turn.started\ndata: {\"turn_id\":\"t\"}\n\n" +
		"id: 2\nevent: delta\ndata: {\"text\":\"Prune last [S1].\"}\n\n" +
		"id: 3\nevent: citation\ndata: {\"marker\":\"S1\"}\n\n" +
		"id: 4\nevent: turn.completed\ndata: {\"not_found\":false,\"grounded_ratio\":0.5}\n\n" +
		"id: 5\nevent: delta\ndata: {\"text\":\"after the end\"}\n\n"
	events, err := readEvents(&http.Response{Body: io.NopCloser(strings.NewReader(stream))}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o := eval.Digest(eval.Question{ID: "q"}, liveMode, events, time.Second)
	if len(events) != 4 || o.Shown != "Prune last [S1]." || len(o.Cited) != 1 || o.Completed == nil || *o.Completed.GroundedRatio != 0.5 {
		t.Errorf("%d events, digested %+v", len(events), o)
	}
	if _, ok := events[0].Data.(json.RawMessage); !ok || events[0].Type != route.EventTurnStarted {
		t.Errorf("an event digest does not read stays raw: %#v", events[0])
	}
	if _, err := readEvents(&http.Response{Body: io.NopCloser(strings.NewReader(stream[:60]))}, time.Now()); err == nil {
		t.Error("a stream cut before its final event read as whole")
	}
}

func TestRetryAfter(t *testing.T) {
	for value, want := range map[string]time.Duration{"3": 3 * time.Second, "": time.Second, "soon": time.Second, "0": time.Second, "3600": maxRetryWait} {
		if got := retryAfter(value); got != want {
			t.Errorf("Retry-After %q: %s, want %s", value, got, want)
		}
	}
}
