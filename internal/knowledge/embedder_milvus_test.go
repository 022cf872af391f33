package knowledge

import (
	"context"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/testenv"
)

// The generation an ingestion builds records its embedder's fingerprint
// and name, and whoever reads what the alias serves (a route's watch, the
// operator's state) reads them back; a generation built before names were
// recorded gets its name on the next ingestion with the same embedder.
func TestGenerationRecordsItsEmbedder(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	embedder := &testenv.HashEmbedder{Dim: testDim}
	rows := rowsOf(t, []ingest.Document{{Source: "waves.md", Principals: []string{"public"},
		Content: "# Sync waves\n\nLower sync waves are applied first."}})

	// Before this change an ingestion recorded the fingerprint only.
	if _, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-64", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	gen, ok, err := store.Active(ctx)
	if err != nil || !ok || gen.Embedder != "hash-64" || gen.EmbedderInfo != nil {
		t.Fatalf("unnamed generation %+v (served %v, %v): want fingerprint hash-64 and no name", gen, ok, err)
	}

	hash := EmbedderInfo{Model: "hash", Dimensions: testDim, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	result, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-64", SyncOptions{Embedder: &hash})
	if err != nil {
		t.Fatal(err)
	}
	if result.NewGeneration || result.Generation.EmbedderInfo == nil || *result.Generation.EmbedderInfo != hash {
		t.Fatalf("same embedder: %+v, want the serving generation named %v in place", result, hash)
	}
	state, err := store.State(ctx)
	if err != nil || state.Generation.Embedder != "hash-64" || state.Generation.EmbedderInfo == nil || *state.Generation.EmbedderInfo != hash {
		t.Fatalf("state %+v, %v: want the embedder hash-64 named %v", state.Generation, err, hash)
	}

	// Another embedder builds a generation that serves under its own name.
	other := EmbedderInfo{Model: "other", Dimensions: testDim}
	result, err = store.Ingest(ctx, RowsOf(rows), embedder, "other-64", SyncOptions{Embedder: &other})
	if err != nil {
		t.Fatal(err)
	}
	gen, _, err = store.Active(ctx)
	if err != nil || !result.NewGeneration || gen.Number != result.Generation.Number || gen.Embedder != "other-64" ||
		gen.EmbedderInfo == nil || *gen.EmbedderInfo != other {
		t.Fatalf("new embedder: serving %+v (%v), want generation %d of other-64 named %v", gen, err, result.Generation.Number, other)
	}
}

func TestEmbedderInfoNamesModelDimensionsAndPrefixes(t *testing.T) {
	for _, tc := range []struct {
		info EmbedderInfo
		want string
	}{
		{EmbedderInfo{Model: "all-MiniLM-L6-v2", Dimensions: 384}, `"all-MiniLM-L6-v2" (384 dimensions, no input prefixes)`},
		{EmbedderInfo{Model: "e5-small", Dimensions: 384, QueryPrefix: "query: ", DocumentPrefix: "passage: "},
			`"e5-small" (384 dimensions, query prefix "query: ", document prefix "passage: ")`},
	} {
		if got := tc.info.String(); got != tc.want {
			t.Errorf("%+v names %s, want %s", tc.info, got, tc.want)
		}
	}
	if parseEmbedderInfo("") != nil || parseEmbedderInfo("{not json") != nil {
		t.Error("a missing or unreadable record names an embedder")
	}
}
