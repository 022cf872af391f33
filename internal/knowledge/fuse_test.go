package knowledge

import (
	"strings"
	"testing"
)

func TestFuseWeighsEachPrimitiveAndKeepsRanks(t *testing.T) {
	list := func(ids ...string) []Hit {
		out := make([]Hit, len(ids))
		for i, id := range ids {
			out[i] = Hit{Row: Row{ID: id}}
		}
		return out
	}
	primitives := []Primitive{TextDense, TextSparse}
	lists := [][]Hit{list("d1", "both", "d3"), list("s1", "s2", "both")}
	ids := func(hits []Hit) string {
		var out []string
		for _, h := range hits {
			out = append(out, h.ID)
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		name    string
		weights map[Primitive]float64
		want    string
	}{
		// Equal weights: found by both wins, then the firsts (ties by id).
		{"equal", nil, "both,d1,s1,s2,d3"},
		// Lexical search at a quarter: dense ranks lead.
		{"dense-led", map[Primitive]float64{TextSparse: 0.25}, "both,d1,d3,s1,s2"},
		// Weight zero leaves a primitive out entirely.
		{"dense only", map[Primitive]float64{TextSparse: 0}, "d1,both,d3"},
	}
	for _, tc := range cases {
		if got := ids(Fuse(primitives, lists, tc.weights, 60, 10)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	fused := Fuse(primitives, lists, nil, 60, 2)
	if len(fused) != 2 || fused[0].Ranks[TextDense] != 2 || fused[0].Ranks[TextSparse] != 3 {
		t.Errorf("first of two: %+v", fused)
	}
	if _, ok := fused[1].Ranks[TextSparse]; ok {
		t.Errorf("d1 was not found lexically: %+v", fused[1].Ranks)
	}
}
