package eval

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/turn"
)

func ratio(x float64) *float64 { return &x }

// answersGold is a corpus of one document with two sections and a
// question set of two answerable questions and one unanswerable.
func answersGold(t *testing.T) (Gold, []Question) {
	t.Helper()
	doc := ingest.Document{Source: "docs/sync.md", Content: "# Sync\n\nIntro to syncing.\n\n## Prune\n\n" +
		"Prune deletes resources that are no longer in Git.\nIt runs after the other resources are healthy.\n\n" +
		"## Retry\n\nA failed sync is retried with backoff.\nThe limit is set per application.\n"}
	file := "sync.md"
	questions := []Question{
		{ID: "prune", Question: "What does prune do?", GoldFile: &file, GoldHeading: []string{"Sync", "Prune"}},
		{ID: "retry", Question: "Is a failed sync retried?", GoldFile: &file, GoldHeading: []string{"Sync", "Retry"}},
		{ID: "velero", Question: "How do I back up with Velero?"},
	}
	g, err := NewGold("docs", []ingest.Document{doc}, questions)
	if err != nil {
		t.Fatal(err)
	}
	return g, questions
}

// Units of the corpus as the turns pack them.
var (
	pruneUnit = Unit{Source: "docs/sync.md", HeadingPath: []string{"Sync", "Prune"},
		Text: "Prune deletes resources that are no longer in Git.\nIt runs after the other resources are healthy."}
	retryUnit = Unit{Source: "docs/sync.md", HeadingPath: []string{"Sync", "Retry"},
		Text: "A failed sync is retried with backoff.\nThe limit is set per application."}
	// A window that holds the prune section's text under another heading.
	pruneWindow = Unit{Source: "docs/sync.md", HeadingPath: []string{"Sync"},
		Text: "Intro to syncing. Prune deletes resources that are no longer in Git. It runs after the other resources are healthy."}
)

func TestDigestReadsATurnsEvents(t *testing.T) {
	_, qs := answersGold(t)
	at := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
	events := []TimedEvent{
		{Event: turn.Event{Type: turn.EventTurnStarted, Data: turn.Started{TurnID: "t"}}, At: 0},
		{Event: turn.Event{Type: turn.EventRetrieval, Data: turn.RetrievalReport{
			Sources: []turn.RetrievalSource{{Marker: "S1", HeadingPath: []string{"Sync", "Prune"}}, {Marker: "S2"}},
			Dropped: []turn.Dropped{{Marker: "S2", Cut: true}, {Marker: "S3"}}}}, At: at(40)},
		{Event: turn.Event{Type: turn.EventDelta, Data: turn.Delta{Text: "Prune deletes "}}, At: at(900)},
		{Event: turn.Event{Type: turn.EventDelta, Data: turn.Delta{Text: "what left Git [S1]."}}, At: at(1200)},
		{Event: turn.Event{Type: turn.EventCitation, Data: turn.Citation{Marker: "S1"}}, At: at(1300)},
		{Event: turn.Event{Type: turn.EventGrounding, Data: turn.Grounding{Index: 0, Score: 0.7, Status: answer.Supported}}, At: at(1400)},
		// An inferred citation of a marker already cited counts once.
		{Event: turn.Event{Type: turn.EventCitation, Data: turn.Citation{Marker: "S1", Inferred: true}}, At: at(1400)},
		{Event: turn.Event{Type: turn.EventCitation, Data: turn.Citation{Marker: "S2", Inferred: true}}, At: at(1400)},
		{Event: turn.Event{Type: turn.EventTurnCompleted, Data: turn.Completed{AnswerChecks: turn.AnswerChecks{GroundedRatio: ratio(1), LinksRemoved: 1}}}, At: at(1500)},
	}
	o := Digest(qs[0], "generative", events, at(1600))
	if o.Shown != "Prune deletes what left Git [S1]." || o.TTFT != at(900) || o.Total != at(1600) {
		t.Errorf("shown %q, ttft %v, total %v", o.Shown, o.TTFT, o.Total)
	}
	if !slices.Equal(o.Cited, []string{"S1", "S2"}) || len(o.Sources) != 2 || !o.Cut["S2"] || o.Cut["S3"] {
		t.Errorf("cited %v, sources %v, cut %v", o.Cited, o.Sources, o.Cut)
	}
	if o.Completed == nil || o.Completed.LinksRemoved != 1 || len(o.Groundings) != 1 || !o.Answered() {
		t.Errorf("completed %+v, groundings %v", o.Completed, o.Groundings)
	}
	failed := Digest(qs[0], "generative", []TimedEvent{
		{Event: turn.Event{Type: turn.EventError, Data: turn.Failed{Code: "model_unavailable", Message: "down"}}},
	}, at(5))
	if failed.Completed != nil || failed.Err != "model_unavailable: down" || failed.TTFT >= 0 || failed.Answered() {
		t.Errorf("failed turn: %+v", failed)
	}
}

func TestCitationPrecisionAndRecall(t *testing.T) {
	g, qs := answersGold(t)
	turn := func(q Question, notFound bool, cited []string, units map[string]Unit, cut ...string) TurnOutcome {
		o := TurnOutcome{Question: q, Cited: cited, Units: units, Cut: map[string]bool{}, TTFT: -1,
			Completed: &turn.Completed{NotFound: notFound}}
		for _, m := range cut {
			o.Cut[m] = true
		}
		return o
	}
	cases := []struct {
		name            string
		turns           []TurnOutcome
		precision       *float64
		recall, cited   float64
		falseNF, trueNF float64
	}{
		{"one supported cited sentence each", []TurnOutcome{
			turn(qs[0], false, []string{"S1"}, map[string]Unit{"S1": pruneUnit}),
			turn(qs[1], false, []string{"S1"}, map[string]Unit{"S1": retryUnit}),
			turn(qs[2], true, nil, nil),
		}, ratio(1), 1, 2, 0, 1},
		{"the wrong section cited beside the right one", []TurnOutcome{
			turn(qs[0], false, []string{"S1", "S2"}, map[string]Unit{"S1": retryUnit, "S2": pruneUnit}),
			turn(qs[1], false, []string{"S1"}, map[string]Unit{"S1": pruneUnit}),
			turn(qs[2], false, []string{"S1"}, map[string]Unit{"S1": pruneUnit}),
		}, ratio(1.0 / 3), 0.5, 3, 0, 0},
		{"a window holding the section's text counts, cut it counts by path only", []TurnOutcome{
			turn(qs[0], false, []string{"S1"}, map[string]Unit{"S1": pruneWindow}),
			turn(qs[1], false, []string{"S2"}, map[string]Unit{"S2": retryUnit}, "S2"),
		}, ratio(1), 1, 2, 0, 0},
		{"a cut window does not count", []TurnOutcome{
			turn(qs[0], false, []string{"S1"}, map[string]Unit{"S1": pruneWindow}, "S1"),
		}, ratio(0), 0, 1, 0, 0},
		{"nothing cited, a false not-found", []TurnOutcome{
			turn(qs[0], true, nil, nil),
			turn(qs[1], false, nil, nil),
		}, nil, 0, 0, 0.5, 0},
	}
	for _, tc := range cases {
		f := Figures("generative", tc.turns, g)
		if (f.CitationPrecision == nil) != (tc.precision == nil) ||
			(f.CitationPrecision != nil && math.Abs(*f.CitationPrecision-*tc.precision) > 1e-9) {
			t.Errorf("%s: precision %v, want %v", tc.name, optional(f.CitationPrecision), optional(tc.precision))
		}
		if f.CitationRecall != tc.recall || float64(f.CitedMarkers) != tc.cited {
			t.Errorf("%s: recall %v (want %v), cited %d (want %v)", tc.name, f.CitationRecall, tc.recall, f.CitedMarkers, tc.cited)
		}
		if f.FalseNotFound != tc.falseNF || f.NotFound != tc.trueNF {
			t.Errorf("%s: not-found answerable %v (want %v), unanswerable %v (want %v)", tc.name, f.FalseNotFound, tc.falseNF, f.NotFound, tc.trueNF)
		}
	}
}

// A heading that is a link is the document's own URL: an extractive answer
// quoting under the fragment's label shows it.
func TestAURLInAFragmentsHeadingIsItsOwn(t *testing.T) {
	f := retrieval.Fragment{Title: "Ingress", HeadingPath: []string{"Ingress", "[ingress-nginx](https://github.com/kubernetes/ingress-nginx)", "SSL"},
		Text: "Expose the API server.", SourceURI: "https://docs.example/ingress.md"}
	shown := "From Ingress › [ingress-nginx](https://github.com/kubernetes/ingress-nginx) › SSL [S1]: Expose the API server."
	if got := UnsupportedURLs(shown, FragmentHolds(f)); len(got) != 0 {
		t.Errorf("the heading's own link counted as foreign: %v", got)
	}
}

func TestUnsupportedURLs(t *testing.T) {
	allowed := []string{"You are ACME's assistant; the status page is https://status.acme.example/.",
		"See [the docs](https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/#prune-last) for more.",
		"argocd/sync.md"}
	cases := []struct {
		shown string
		want  []string
	}{
		{"Prune runs last [S1].", nil},
		{"Read https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/.", nil},
		{"Status: <https://status.acme.example>", nil},
		{"[link removed] and the source argocd/sync.md", nil},
		{"Read [this](https://evil.example/?q=secret) and https://argo-cd.readthedocs.io/en/latest/faq.",
			[]string{"https://evil.example/?q=secret", "https://argo-cd.readthedocs.io/en/latest/faq"}},
		{"A prefix of an allowed URL is another URL: https://argo-cd.readthedocs.io/en",
			[]string{"https://argo-cd.readthedocs.io/en"}},
		{"Twice: http://x.example/a, http://x.example/a#top", []string{"http://x.example/a"}},
	}
	for _, tc := range cases {
		if got := UnsupportedURLs(tc.shown, allowed); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.shown, got, tc.want)
		}
	}
}

// The score finds and judges an answer's links as the route's link guard
// does. Its own reading (a regexp for http(s) and ftp URLs, cut at its own
// punctuation) disagreed with the guard both ways: it called an answer's
// URL unsupported where the fragment closed it with strikethrough "~~"
// (the guard ends the URL before it, as a client does, and lets the
// answer's through), and it saw no link in a scheme-relative "//host" or
// a "www." autolink, which the guard removes because a client loads or
// links them.
func TestUnsupportedURLsAgreeWithTheLinkGuard(t *testing.T) {
	allowed := []string{"The old endpoint ~~https://api.acme.example/v1~~ answers 410 since March."}
	links := answer.AllowedLinks{}
	links.AddText(allowed[0])
	cases := []struct {
		shown string
		want  []string
	}{
		// The regexp: unsupported (it kept "~~" in the fragment's URL).
		{"Calls to https://api.acme.example/v1 get 410.", nil},
		// The regexp: no link at all.
		{"See ![status](//evil.example/pixel.png?q=secret).", []string{"//evil.example/pixel.png?q=secret"}},
		{"Open www.evil.example/?q=secret for more.", []string{"www.evil.example/?q=secret"}},
	}
	for _, tc := range cases {
		got := UnsupportedURLs(tc.shown, allowed)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: unsupported %q, want %q", tc.shown, got, tc.want)
		}
		guard := answer.NewLinkGuard(links)
		pipe := answer.NewPipe(func(string) error { return nil }, guard)
		if err := errors.Join(pipe.Write(tc.shown), pipe.Flush()); err != nil {
			t.Fatal(err)
		}
		if removes := guard.Removed() > 0; removes != (len(got) > 0) {
			t.Errorf("%q: the guard removes a link: %v; the score finds one unsupported: %v", tc.shown, removes, len(got) > 0)
		}
	}
}

func TestFiguresOfAMode(t *testing.T) {
	g, qs := answersGold(t)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	turns := []TurnOutcome{
		{Question: qs[0], TTFT: ms(1000), Total: ms(4000), Shown: "Prune runs last.", Allowed: []string{pruneUnit.Text},
			Completed: &turn.Completed{AnswerChecks: turn.AnswerChecks{GroundedRatio: ratio(1)}}, Groundings: make([]answer.Grounding, 2)},
		{Question: qs[1], TTFT: ms(3000), Total: ms(6000), Shown: "See https://made.up/retry.", Allowed: []string{retryUnit.Text},
			Completed:  &turn.Completed{AnswerChecks: turn.AnswerChecks{GroundedRatio: ratio(0.5), Withheld: 1, LinksRemoved: 2, AnswerReplaced: true}},
			Groundings: make([]answer.Grounding, 2)},
		// The not-found answer is quick and has no model tokens: it counts
		// for the total time, not the first token.
		{Question: qs[2], TTFT: ms(5), Total: ms(10), Completed: &turn.Completed{NotFound: true}},
		{Question: qs[0], TTFT: -1, Err: "timeout"},
	}
	f := Figures("fallback", turns, g)
	if f.Turns != 4 || f.Errors != 1 || f.Answered != 2 || f.Answerable != 2 || f.Unanswerable != 1 {
		t.Errorf("counts %+v", f)
	}
	if f.GroundedRatio == nil || *f.GroundedRatio != 0.75 || f.GroundedBy != GroundedByRoute {
		t.Errorf("grounded %v by %q", optional(f.GroundedRatio), f.GroundedBy)
	}
	if f.UnsupportedURLTurns != 1 || f.LinksRemoved != 2 || f.Replaced != 0.5 || f.Withheld != 1 || f.Sentences != 4 {
		t.Errorf("urls %d, links %d, replaced %v, withheld %d/%d", f.UnsupportedURLTurns, f.LinksRemoved, f.Replaced, f.Withheld, f.Sentences)
	}
	if f.NotFound != 1 || f.FalseNotFound != 0 {
		t.Errorf("not-found %v / %v", f.NotFound, f.FalseNotFound)
	}
	if f.TTFTP50 != 1000 || f.TTFTP90 != 3000 || f.TotalP50 != 4000 {
		t.Errorf("ttft %v/%v, total %v", f.TTFTP50, f.TTFTP90, f.TotalP50)
	}
	// An extractive turn the evaluation checked itself says so.
	checked := []TurnOutcome{{Question: qs[0], TTFT: ms(10), Completed: &turn.Completed{}, Checked: ratio(1)}}
	if f := Figures("extractive", checked, g); f.GroundedRatio == nil || *f.GroundedRatio != 1 || f.GroundedBy != GroundedByEval {
		t.Errorf("extractive grounded %v by %q", optional(f.GroundedRatio), f.GroundedBy)
	}
	if f := Figures("extractive", checked[:0], g); f.GroundedRatio != nil || f.CitationPrecision != nil {
		t.Errorf("no turns: %+v", f)
	}
}

func TestPercentiles(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	cases := []struct {
		ds       []time.Duration
		p50, p90 float64
	}{
		{nil, 0, 0},
		{ms(7), 7, 7},
		{ms(4, 1, 3, 2), 2, 4},
		{ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 5, 9},
	}
	for _, tc := range cases {
		if p50, p90 := PercentileMillis(tc.ds, 0.5), PercentileMillis(tc.ds, 0.9); p50 != tc.p50 || p90 != tc.p90 {
			t.Errorf("%v: p50 %v p90 %v, want %v %v", tc.ds, p50, p90, tc.p50, tc.p90)
		}
	}
}

func TestRatioHistogram(t *testing.T) {
	g, qs := answersGold(t)
	turn := func(r *float64, notFound bool, cited ...string) TurnOutcome {
		return TurnOutcome{Question: qs[0], Cited: cited, Units: map[string]Unit{"S1": pruneUnit, "S2": retryUnit},
			Completed: &turn.Completed{NotFound: notFound, AnswerChecks: turn.AnswerChecks{GroundedRatio: r}}}
	}
	bins := RatioHistogram([]TurnOutcome{
		turn(ratio(0), false), turn(ratio(0.2), false, "S1"), turn(ratio(0.5), false, "S2"),
		turn(ratio(1), false, "S1"), turn(nil, false, "S1"), turn(ratio(0), true),
	}, g)
	want := []RatioBin{{0, 0.25, 2, 1}, {0.25, 0.5, 0, 0}, {0.5, 0.75, 1, 0}, {0.75, 1, 1, 1}}
	if !slices.Equal(bins, want) {
		t.Errorf("bins %v, want %v", bins, want)
	}
	if bins := RatioHistogram([]TurnOutcome{turn(nil, false)}, g); bins != nil {
		t.Errorf("no ratios: %v", bins)
	}
}
