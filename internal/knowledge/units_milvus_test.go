package knowledge

import (
	"context"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/testenv"
)

// withUnits gives each row its text's sentences as its units, as the
// ingestion run cuts them with the grounding check's rule.
func withUnits(rows []Row) []Row {
	for i, r := range rows {
		for _, s := range strings.SplitAfter(r.Text, ". ") {
			if s = strings.TrimSpace(s); s != "" && !strings.HasPrefix(s, "#") {
				rows[i].Units = append(rows[i].Units, s)
			}
		}
	}
	return rows
}

// An ingestion with a unit embedder stores each chunk's units' vectors
// with it and records so on the generation; a route reads them by the
// chunk's id and the unit's text. A generation built without them serves
// none (the route embeds them per turn), and the next ingestion with a
// unit embedder builds a new generation that holds them.
func TestUnitVectorsAreStoredWithTheirChunks(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	embedder := &testenv.HashEmbedder{Dim: testDim}
	docs := []ingest.Document{
		{Source: "waves.md", Principals: []string{"public"}, Content: "# Sync waves\n\nLower sync waves are applied first. A wave waits for the previous one to be healthy."},
		{Source: "hooks.md", Principals: []string{"public"}, Content: "# Sync hooks\n\nSync hooks run during a sync. A PreSync hook runs before the sync."},
	}

	first, err := store.Ingest(ctx, RowsOf(withUnits(rowsOf(t, docs))), embedder, "hash-64", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows := withUnits(rowsOf(t, docs))
	ids := []string{rows[0].ID, rows[1].ID}
	if first.Generation.Units != "" {
		t.Errorf("a generation built without a unit embedder records units %q", first.Generation.Units)
	}
	if got, err := store.UnitVectors(ctx, ids, nil); err != nil || len(got) != 0 {
		t.Fatalf("without stored units: %d vectors, %v; want none", len(got), err)
	}

	second, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-64", SyncOptions{UnitEmbedder: embedder})
	if err != nil {
		t.Fatal(err)
	}
	if !second.NewGeneration || second.Generation.Units != UnitsVersion {
		t.Fatalf("new generation %v, units %q: want a new generation holding units %q", second.NewGeneration, second.Generation.Units, UnitsVersion)
	}
	if state, err := store.State(ctx); err != nil || state.Generation.Units != UnitsVersion {
		t.Fatalf("state %+v, %v: want units %q recorded", state.Generation, err, UnitsVersion)
	}
	got, err := store.UnitVectors(ctx, ids[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows[0].Units) {
		t.Errorf("%d vectors for %q's %d units", len(got), rows[0].Source, len(rows[0].Units))
	}
	for _, u := range rows[0].Units {
		v, ok := got[UnitHash(u)]
		if !ok {
			t.Fatalf("unit %q not stored", u)
		}
		want, _ := embedder.Embed(ctx, []string{u})
		if c := Cosine(v, want[0]); c < 0.999 {
			t.Errorf("unit %q: stored vector at cosine %.4f of its embedding", u, c)
		}
	}
	if _, ok := got[UnitHash(rows[1].Units[0])]; ok {
		t.Error("a chunk not asked for came back")
	}
}
