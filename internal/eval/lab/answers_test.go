package lab

import (
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/route/answer"
)

func TestSyntheticSentenceSets(t *testing.T) {
	s := "If the sync fails, Argo CD retries it with backoff."
	want := []string{"Note that if the sync fails, Argo CD retries it with backoff.",
		"Argo CD retries it with backoff.",
		"if the sync fails, argo cd retries it with backoff.",
		"In short, if the sync fails, Argo CD retries it with backoff."}
	want = append(want, "If the sync fails, Argo CD.",
		"Argo CD retries it with backoff, if the sync fails.",
		"Sync fails argo cd retries backoff.",
		"Note that if the sync fails, Argo CD.")
	for i, w := range want {
		if got := paraphrase(s, i); got != w {
			t.Errorf("paraphrase %d: %q, want %q", i, got, w)
		}
	}
	if got := paraphrase("The controller compares the live state with Git.", 1); got != "Controller compares the live state with Git." {
		t.Errorf("stopwords: %q", got)
	}
	if got := invent(s, 1, "retries"); got != "If the sync fails, Argo CD retries it with backoff within 4711 seconds." {
		t.Errorf("invent: %q", got)
	}
	// An invention the fragments hold is passed over for the next one.
	if got := invent(s, 0, "use --sync-jitter-seconds"); !strings.Contains(got, "4711") {
		t.Errorf("invent past a held flag: %q", got)
	}
	text := "## Prune\n\nPrune deletes resources that are gone from Git. It waits for health.\n\n```yaml\nprune: true # this is a long code comment line here\n```\n" +
		"- Resources are pruned last when the option PruneLast is set.\n| a | table row with many words in it here |\n"
	got := candidateSentences(text)
	wantSentences := []string{"Prune deletes resources that are gone from Git.", "Resources are pruned last when the option PruneLast is set."}
	if !slices.Equal(got, wantSentences) {
		t.Errorf("candidate sentences %q", got)
	}
	if got := spread([]string{"a", "b", "c", "d", "e", "f", "g", "h"}, 4); !slices.Equal(got, []string{"a", "c", "e", "g"}) {
		t.Errorf("spread %v", got)
	}
	if got := quotedLines("From Sync › Prune [S1]:\n> Prune deletes resources.\n> ```yaml\n> prune: true\n> ```\n\n> 42\n"); !slices.Equal(got,
		[]string{"Prune deletes resources.", "prune: true"}) {
		t.Errorf("quoted lines %q", got)
	}
}

func TestCurvePassRates(t *testing.T) {
	g := func(score float64, invented ...string) answer.Grounding {
		return answer.Grounding{Score: score, Invented: invented}
	}
	curve := curveOf(GroundingCurve{Questions: 1},
		[]answer.Grounding{g(0.9), g(0.52), g(0.41), g(0.29)},
		[]answer.Grounding{g(0.5), g(0.2), g(0.33, "v2.0"), g(0.1)},
		[]answer.Grounding{g(0.9, "--sync-jitter-seconds"), g(0.8)})
	if len(curve.Points) != 9 || curve.Points[0].Threshold != 0.3 || curve.Points[8].Threshold != 0.7 {
		t.Fatalf("thresholds %v", curve.Points)
	}
	at := func(th float64) GroundingPoint {
		for _, p := range curve.Points {
			if p.Threshold == th {
				return p
			}
		}
		t.Fatalf("no threshold %v", th)
		return GroundingPoint{}
	}
	if p := at(0.3); p.Supported != 0.75 || p.Unsupported != 0.25 || p.Invented != 0.5 {
		t.Errorf("0.30: %+v", p)
	}
	if p := at(0.45); p.Supported != 0.5 || p.Unsupported != 0.25 || p.Invented != 0.5 {
		t.Errorf("0.45: %+v", p)
	}
	if p := at(0.55); p.Supported != 0.25 || p.Unsupported != 0 {
		t.Errorf("0.55: %+v", p)
	}
	if curve.InventedFlagged != 0.5 || curve.Supported != 4 || curve.Invented != 2 {
		t.Errorf("curve %+v", curve)
	}
	bins := histogram([]answer.Grounding{g(0.02), g(0.47), g(0.47, "x1"), g(1)}, 0.45)
	if bins[0].Sentences != 1 || bins[9].Sentences != 2 || bins[9].Invented != 1 || bins[9].Supported != 1 || bins[19].Sentences != 1 {
		t.Errorf("histogram %+v", bins)
	}
}
