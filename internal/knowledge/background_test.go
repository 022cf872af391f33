package knowledge

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

func TestBackgroundOfComparesOnlyOtherDocuments(t *testing.T) {
	// Unit vectors in the plane at known angles: cos 0 = 1, cos 60° = 0.5,
	// cos 90° = 0.
	angle := func(deg float64) []float32 {
		r := deg * math.Pi / 180
		return []float32{float32(math.Cos(r)), float32(math.Sin(r))}
	}
	queries := []BackgroundQuery{{DocID: "a", Vector: angle(0)}, {DocID: "b", Vector: []float32{0, 3}}} // not unit: cosines normalise
	chunks := []BackgroundChunk{
		{DocID: "a", Text: angle(0), Title: angle(0)},   // a's own chunk: left out for query a
		{DocID: "b", Text: angle(90), Title: angle(60)}, // for a: max(0, 0.5) = 0.5; b's own for query b
		{DocID: "c", Text: angle(60), Title: angle(90)}, // for a: 0.5; for b: max(cos 30°, 1) = 1
	}
	// Query a: chunks b and c, 0.5 each. Query b (at 90°): chunk a, max(0, 0) = 0; chunk c, max(cos 30°, 1) = 1.
	b := BackgroundOf(queries, chunks)
	if b.Samples != 4 {
		t.Fatalf("samples = %d, want 4 (pairs of different documents)", b.Samples)
	}
	// Similarities {0.5, 0.5, 0, 1}: mean 0.5, population sd sqrt(0.125).
	if !near(b.Mean, 0.5) || !near(b.StdDev, math.Round(math.Sqrt(0.125)*1e4)/1e4) {
		t.Errorf("mean %v sd %v, want 0.5 and %.4f", b.Mean, b.StdDev, math.Sqrt(0.125))
	}
	if !near(b.P50, 0.5) || !near(b.P90, 1) || !near(b.P99, 1) {
		t.Errorf("percentiles %v %v %v, want 0.5 1 1", b.P50, b.P90, b.P99)
	}
	if got := b.Floor(2); !near(got, b.Mean+2*b.StdDev) {
		t.Errorf("Floor(2) = %v", got)
	}
}

func TestBackgroundOfNeedsTwoDocuments(t *testing.T) {
	v := []float32{1, 0}
	b := BackgroundOf([]BackgroundQuery{{DocID: "a", Vector: v}}, []BackgroundChunk{{DocID: "a", Text: v, Title: v}})
	if b.Samples != 0 || b.Mean != 0 {
		t.Errorf("one document gave %+v, want no samples", b)
	}
	if b := BackgroundOf(nil, nil); b.Samples != 0 {
		t.Errorf("nothing gave %+v", b)
	}
}

func TestBackgroundPercentilesAreNearestRank(t *testing.T) {
	sims := make([]float64, 100)
	for i := range sims {
		sims[i] = float64(100-i) / 100 // 1.00 … 0.01, unsorted input
	}
	b := summarise(sims)
	if !near(b.P50, 0.5) || !near(b.P90, 0.9) || !near(b.P99, 0.99) || !near(b.Mean, 0.505) {
		t.Errorf("%+v: want p50 0.5, p90 0.9, p99 0.99, mean 0.505", b)
	}
}

func TestBackgroundPropertyRoundTrip(t *testing.T) {
	b := Background{Mean: 0.8123, StdDev: 0.0311, P50: 0.81, P90: 0.85, P99: 0.9, Samples: 32000}
	value, err := marshalBackground(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := parseBackground(value); got == nil || *got != b {
		t.Fatalf("round trip of %s gave %+v", value, got)
	}
	for _, bad := range []string{"", "{", `{"version":99,"mean":0.1,"samples":5}`, `{"version":1,"mean":0.1,"samples":0}`} {
		if got := parseBackground(bad); got != nil {
			t.Errorf("%q read as %+v, want none (measure again)", bad, got)
		}
	}
}
