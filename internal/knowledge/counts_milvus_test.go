package knowledge

import (
	"context"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/testenv"
)

// The counts the ingestion passes (chunks embedded cut, documents
// refused) are recorded on the generation and read back for the
// operator, also when a later run changes only a count (no row written).
func TestIngestionCountsAreRecordedOnTheGeneration(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	embedder := &testenv.HashEmbedder{Dim: testDim}
	docs := []ingest.Document{{Source: "waves.md", Principals: []string{"public"}, Content: "# Sync waves\n\nLower sync waves are applied first."}}
	result, err := store.Ingest(ctx, RowsOf(rowsOf(t, docs)), embedder, "hash-64", SyncOptions{Counts: func() Counts { return Counts{Truncated: 1, Refused: 2} }})
	if err != nil {
		t.Fatal(err)
	}
	if result.Generation.Truncated == nil || *result.Generation.Truncated != 1 {
		t.Fatalf("ingest result records %v truncated chunks, want 1", result.Generation.Truncated)
	}
	if state, err := store.State(ctx); err != nil || state.Generation.Truncated == nil || *state.Generation.Truncated != 1 ||
		state.Generation.Refused == nil || *state.Generation.Refused != 2 {
		t.Fatalf("state %+v, %v: want 1 truncated chunk and 2 refused documents recorded", state, err)
	}
	result, err = store.Ingest(ctx, RowsOf(rowsOf(t, docs)), embedder, "hash-64", SyncOptions{})
	if err != nil || result.Written != 0 {
		t.Fatalf("second run: %+v, %v; want nothing written", result, err)
	}
	if state, err := store.State(ctx); err != nil || state.Generation.Truncated == nil || *state.Generation.Truncated != 0 ||
		state.Generation.Refused == nil || *state.Generation.Refused != 0 {
		t.Fatalf("state %+v, %v: want 0 truncated chunks and 0 refused documents after a clean run", state, err)
	}
}
