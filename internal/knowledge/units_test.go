package knowledge

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	norm := 0.0
	for i := range v {
		v[i] = float32(r.NormFloat64())
		norm += float64(v[i] * v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

// Stored units come back by their text's hash, each text once, with
// cosines within 0.001 of the vectors embedded: the grounding check's
// scores (cosine and word overlap, threshold 0.55) do not move.
func TestUnitVectorsRoundTrip(t *testing.T) {
	const dim = 384
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"Lower waves are applied first.", "A wave waits for the previous one.", "Lower waves are applied first."}
	vectors := [][]float32{randomUnit(r, dim), randomUnit(r, dim), randomUnit(r, dim)}
	field := encodeUnits(texts, vectors, dim)
	got := map[uint64][]float32{}
	if err := decodeUnits(field, dim, got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d units stored, want 2 (a repeated text once)", len(got))
	}
	probe := randomUnit(r, dim)
	for i, text := range texts[:2] {
		v, ok := got[UnitHash(text)]
		if !ok {
			t.Fatalf("unit %q not found by its hash", text)
		}
		for _, other := range [][]float32{vectors[i], probe} {
			if d := math.Abs(float64(Cosine(v, other) - Cosine(vectors[i], other))); d > 0.001 {
				t.Errorf("unit %q: a cosine moved by %.4f", text, d)
			}
		}
	}
	if err := decodeUnits(field[:len(field)-8], dim, map[uint64][]float32{}); err == nil {
		t.Error("a cut field decoded")
	}
}

// A chunk with more units than its field holds stores as many as fit;
// the rest are embedded at query time.
func TestUnitVectorsFitTheirField(t *testing.T) {
	const dim = 768
	r := rand.New(rand.NewPCG(3, 4))
	var texts []string
	var vectors [][]float32
	for i := range 200 {
		texts, vectors = append(texts, fmt.Sprint("unit ", i)), append(vectors, randomUnit(r, dim))
	}
	field := encodeUnits(texts, vectors, dim)
	if len(field) > maxTextLength {
		t.Fatalf("the field is %d long, over the schema's %d", len(field), maxTextLength)
	}
	got := map[uint64][]float32{}
	if err := decodeUnits(field, dim, got); err != nil {
		t.Fatal(err)
	}
	want := base64.StdEncoding.DecodedLen(maxTextLength) / unitBytes(dim)
	if len(got) != want {
		t.Errorf("%d units stored, want the %d that fit", len(got), want)
	}
	if _, ok := got[UnitHash("unit 0")]; !ok {
		t.Error("the first unit is not among those stored")
	}
}
