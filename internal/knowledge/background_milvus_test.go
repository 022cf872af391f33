package knowledge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/testenv"
)

func TestIngestRecordsTheBackground(t *testing.T) {
	store := testStore(t, testDim)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	documents := &testenv.HashEmbedder{Dim: testDim}
	queries := &testenv.HashEmbedder{Dim: testDim}
	opts := SyncOptions{QueryEmbedder: queries}

	rows := corpusRows(t, nil)
	first, err := store.Ingest(ctx, RowsOf(rows), documents, "hash-64", opts)
	if err != nil {
		t.Fatal(err)
	}
	b := first.Background
	if b == nil || b.Samples < 1000 || b.StdDev <= 0 || !(b.P50 <= b.P90 && b.P90 <= b.P99) || b.Mean <= 0 || b.Mean >= 1 {
		t.Fatalf("first ingestion measured %+v, want a background of many pairs", b)
	}
	if queries.Calls != 1 || queries.Texts > backgroundQueries {
		t.Errorf("the titles were embedded in %d calls, %d texts: want one call of at most %d", queries.Calls, queries.Texts, backgroundQueries)
	}
	t.Logf("background of %d chunks: %+v", len(rows), *b)

	// Recorded on the generation, before routes see it.
	active, ok, err := store.Active(ctx)
	if err != nil || !ok || active.Background == nil || *active.Background != *b {
		t.Fatalf("the served generation records %+v (ok %v, err %v), want %+v", active.Background, ok, err, *b)
	}
	state, err := store.State(ctx)
	if err != nil || state.Generation.Background == nil || *state.Generation.Background != *b {
		t.Fatalf("index state %+v (%v) does not carry the background", state, err)
	}
	// The same collection gives the same figures: the sample is chosen
	// by id, not by the order Milvus returns rows in.
	start := time.Now()
	again, err := store.MeasureBackground(ctx, queries)
	if err != nil || again != *b {
		t.Errorf("measured again: %+v (%v), want %+v", again, err, *b)
	}
	t.Logf("measured in %s", time.Since(start).Round(time.Millisecond))

	// Nothing changed: nothing measured, the record stays.
	calls := queries.Calls
	second, err := store.Ingest(ctx, RowsOf(rows), documents, "hash-64", opts)
	if err != nil {
		t.Fatal(err)
	}
	if second.Background != nil || queries.Calls != calls {
		t.Errorf("an ingestion that changed nothing measured the background: %+v", second.Background)
	}
	if active, _, _ = store.Active(ctx); active.Background == nil {
		t.Error("the record was lost")
	}

	// An edit measures again.
	edited := corpusRows(t, func(c map[string]string) {
		c["faq.md"] = strings.Replace(c["faq.md"], "\n## ", "\n\nThis sentence was added by an editor.\n\n## ", 1)
	})
	third, err := store.Ingest(ctx, RowsOf(edited), documents, "hash-64", opts)
	if err != nil {
		t.Fatal(err)
	}
	if third.Written == 0 || third.Background == nil {
		t.Errorf("an ingestion that wrote %d chunks measured %+v", third.Written, third.Background)
	}

	// Without a query embedder (e.g. an older caller) nothing is measured.
	plain := testStore(t, testDim)
	few := rows[:300] // several documents
	result, err := plain.Ingest(ctx, RowsOf(few), documents, "hash-64", SyncOptions{})
	if err != nil || result.Background != nil || result.Generation.Background != nil {
		t.Errorf("ingest without a query embedder: %+v, %v", result.Background, err)
	}
	// A collection without a record is measured by the next run, even
	// when nothing else changed.
	result, err = plain.Ingest(ctx, RowsOf(few), documents, "hash-64", opts)
	if err != nil || result.Written != 0 || result.Background == nil {
		t.Errorf("ingest into a collection without a background: wrote %d, measured %+v, %v", result.Written, result.Background, err)
	}
}

func TestOneDocumentHasNoBackground(t *testing.T) {
	store := testStore(t, testDim)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows := rowsOf(t, []ingest.Document{{Source: "only.md", Principals: []string{"public"},
		Content: "# Only\n\nOne document.\n\n## Part\n\nIts second section.\n"}})
	embedder := &testenv.HashEmbedder{Dim: testDim}
	result, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-64", SyncOptions{QueryEmbedder: embedder})
	if err != nil || result.Background != nil {
		t.Fatalf("one document: background %+v, error %v; want none and no error", result.Background, err)
	}
	if _, err := store.MeasureBackground(ctx, embedder); !errors.Is(err, ErrNoBackground) {
		t.Errorf("MeasureBackground of one document: %v, want ErrNoBackground", err)
	}
}
