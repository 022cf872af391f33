package retrieval

import (
	"strings"
	"testing"
)

func TestDiversityLetsNearlyAsGoodFragmentsOfADocumentIn(t *testing.T) {
	fragments := []Fragment{
		{ID: "a1", DocID: "a", Score: 0.70},
		{ID: "a2", DocID: "a", Score: 0.67}, // within 0.05 of a's best
		{ID: "b1", DocID: "b", Score: 0.66},
		{ID: "a3", DocID: "a", Score: 0.60}, // too far below a's best
		{ID: "b2", DocID: "b", Score: 0.65},
		{ID: "b3", DocID: "b", Score: 0.64},
		{ID: "b4", DocID: "b", Score: 0.64}, // over the cap of three
		{ID: "c1", DocID: "c", Score: 0.30}, // a document's best always enters
	}
	ids := func(fs []Fragment) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.ID)
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		name string
		rule Diversity
		want string
	}{
		{"one per document (v1)", Diversity{}, "a1,b1,c1"},
		{"margin", Diversity{Margin: 0.05, MaxPerDocument: 3}, "a1,a2,b1,b2,b3,c1"},
		{"margin, two per document", Diversity{Margin: 0.05, MaxPerDocument: 2}, "a1,a2,b1,b2,c1"},
		{"a margin without a cap keeps one", Diversity{Margin: 0.05}, "a1,b1,c1"},
	}
	// Parts of one split section count once.
	parts := []Fragment{
		{ID: "p1", DocID: "a", ParentID: "s", PartCount: 2, Score: 0.7},
		{ID: "p2", DocID: "a", ParentID: "s", PartCount: 2, Score: 0.7},
		{ID: "a2", DocID: "a", Score: 0.69},
	}
	if got := ids(DefaultDiversity().apply(parts)); got != "p1,a2" {
		t.Errorf("parts: %s, want p1,a2", got)
	}
	for _, tc := range cases {
		if got := ids(tc.rule.apply(append([]Fragment(nil), fragments...))); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A document holding four of the best ten candidates is what the question
// is about: its sections enter by rank, past the margin and the cap; a
// document with three of them stays under the usual rule.
func TestDiversityLetsADominantDocumentsSectionsIn(t *testing.T) {
	ranked := "a1 b1 a2 c1 a3 d1 b2 a4 e1 b3 f1 a5 b4"
	var fragments []Fragment
	for i, id := range strings.Fields(ranked) {
		// Each candidate is 0.1 below the one before: no margin lets a
		// second fragment in.
		fragments = append(fragments, Fragment{ID: id, DocID: id[:1], Score: 2 - 0.1*float64(i)})
	}
	got := func(rule Diversity) string {
		var out []string
		for _, f := range rule.apply(append([]Fragment(nil), fragments...)) {
			out = append(out, f.ID)
		}
		return strings.Join(out, " ")
	}
	if want := "a1 b1 a2 c1 a3 d1 a4 e1 f1 a5"; got(DefaultDiversity()) != want {
		t.Errorf("default rule: %s, want %s (a holds 4 of the first 10; b, with 3, keeps one)", got(DefaultDiversity()), want)
	}
	strict := DefaultDiversity()
	strict.Dominance = 0.5
	if want := "a1 b1 c1 d1 e1 f1"; got(strict) != want {
		t.Errorf("dominance 0.5: %s, want %s", got(strict), want)
	}
	// 0.3 of ten is three (0.3 × 10 is a hair over 3 in floating point).
	loose := DefaultDiversity()
	loose.Dominance = 0.3
	if want := "a1 b1 a2 c1 a3 d1 b2 a4 e1 b3 f1 a5 b4"; got(loose) != want {
		t.Errorf("dominance 0.3: %s, want %s (a and b both dominate)", got(loose), want)
	}
}
