package retrieval

import (
	"context"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
)

func TestDiversityLetsNearlyAsGoodFragmentsOfADocumentIn(t *testing.T) {
	fragments := []Fragment{
		{ID: "a1", DocID: "a", Similarity: 0.70},
		{ID: "a2", DocID: "a", Similarity: 0.67}, // within 0.05 of a's best
		{ID: "b1", DocID: "b", Similarity: 0.66},
		{ID: "a3", DocID: "a", Similarity: 0.60}, // too far below a's best
		{ID: "b2", DocID: "b", Similarity: 0.65},
		{ID: "b3", DocID: "b", Similarity: 0.64},
		{ID: "b4", DocID: "b", Similarity: 0.64}, // over the cap of three
		{ID: "c1", DocID: "c", Similarity: 0.30}, // a document's best always enters
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
		{ID: "p1", DocID: "a", ParentID: "s", PartCount: 2, Similarity: 0.7},
		{ID: "p2", DocID: "a", ParentID: "s", PartCount: 2, Similarity: 0.7},
		{ID: "a2", DocID: "a", Similarity: 0.69},
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
		fragments = append(fragments, Fragment{ID: id, DocID: id[:1], Similarity: 2 - 0.1*float64(i)})
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

// relevances is a cross-encoder in process: it rescores each fragment
// with the relevance named for its id, in the order given, as
// CrossEncoder does.
type relevances map[string]float64

func (r relevances) Rerank(_ context.Context, _ string, fragments []Fragment) ([]Fragment, error) {
	out := append([]Fragment(nil), fragments...)
	for i := range out {
		out[i].Score = r[out[i].ID]
	}
	return out, nil
}

// The margin is documented as a cosine: under a cross-encoder a further
// section of a document enters by how similar it is to the question, as
// under rrf, not by the relevance, whose scale (a probability, often near
// 0 or 1) would make 0.05 mean something else per model and question.
func TestDiversityMarginIsACosineUnderACrossEncoder(t *testing.T) {
	gen := int64(1)
	similar := func(id, doc string, similarity float32) knowledge.Hit {
		h := hit(id, doc, 1, "prose")
		h.Similarity = similarity
		return h
	}
	index := &fakeIndex{hits: []knowledge.Hit{
		similar("a1", "a", 0.75),
		similar("a2", "a", 0.72), // within 0.05 of a1
		similar("b1", "b", 0.70),
		similar("a3", "a", 0.40), // far below a1
	}}
	s := newSearcher(index, &gen)
	s.Settings.StrictFloor, s.Settings.MaxFragments = 0.01, 10
	s.Settings.Diversity = DefaultDiversity()
	// The cross-encoder finds a2 much less relevant than a1, and a3 about
	// as relevant.
	s.Reranker = relevances{"a1": 0.95, "a2": 0.30, "b1": 0.50, "a3": 0.93}
	r, err := s.Search(context.Background(), "how does it work", []string{"group:staff"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range r.Fragments {
		ids = append(ids, f.ID)
	}
	if got := strings.Join(ids, ","); got != "a1,a2,b1" {
		t.Errorf("fragments %s, want a1,a2,b1: a2 within the cosine margin of a1, a3 not", got)
	}
	if f := r.Fragments[0]; f.Score != 0.95 || f.Similarity < 0.749 || f.Similarity > 0.751 {
		t.Errorf("a1 scored %g, similarity %g: want the relevance as its score and its cosine beside it", f.Score, f.Similarity)
	}
}
