package turn_test

import (
	"slices"
	"testing"

	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

func groundings(events []turn.Event) []answer.Grounding {
	var out []answer.Grounding
	for _, e := range routetest.OfType(events, turn.EventGrounding) {
		out = append(out, answer.Grounding(e.Data.(turn.Grounding)))
	}
	return out
}

// An answer in the fragment's words is supported, and the citation the
// model left out is inferred.
func TestGroundedSentenceIsSupportedAndItsCitationInferred(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync waves",
		"Lower waves are applied first, and a wave starts only when the previous one is healthy."))
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	g := groundings(events)
	if len(g) != 1 || g[0].Status != answer.Supported || g[0].Marker != "S1" {
		t.Fatalf("grounding %+v", g)
	}
	cites := routetest.OfType(events, turn.EventCitation)
	if len(cites) != 1 || !cites[0].Data.(turn.Citation).Inferred || cites[0].Data.(turn.Citation).Marker != "S1" {
		t.Errorf("citations %+v, want S1 inferred", cites)
	}
	if r := completed(t, events).GroundedRatio; r == nil || *r != 1 {
		t.Errorf("grounded ratio %v, want 1", r)
	}
}

// A sentence with an invented flag and number is unsupported even where
// its other words match a fragment, and the marker it claims is reported.
func TestInventedCommandIsUnsupportedWhateverItsWording(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync waves",
		"Lower waves are applied first [S1]. Lower waves are applied first with --wave-limit 7 in the sync [S1]."))
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	g := groundings(events)
	if len(g) != 2 || g[0].Status != answer.Supported || g[1].Status != answer.Unsupported {
		t.Fatalf("grounding %+v", g)
	}
	if !slices.Contains(g[1].Invented, "--wave-limit") || !slices.Contains(g[1].Invented, "7") || !slices.Equal(g[1].UnsupportedMarkers, []string{"S1"}) {
		t.Errorf("the invented sentence: %+v", g[1])
	}
	if r := completed(t, events).GroundedRatio; r == nil || *r != 0.5 {
		t.Errorf("grounded ratio %v, want 0.5", r)
	}
	for _, c := range routetest.OfType(events, turn.EventCitation) {
		if c.Data.(turn.Citation).Inferred {
			t.Errorf("a marked answer got an inferred citation: %+v", c)
		}
	}
}
