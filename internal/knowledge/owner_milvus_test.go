package knowledge

import (
	"context"
	"errors"
	"testing"

	"github.com/ragroute/ragroute/internal/testenv"
)

// TestAStoreCannotTakeAnotherStoresCollection: two KnowledgeStores (of two
// namespaces) that name the same Milvus collection. The first to ingest
// owns it; the other's ingestion is refused before it writes a row, and
// its reads are refused too, while the owner's keep working.
func TestAStoreCannotTakeAnotherStoresCollection(t *testing.T) {
	ctx := context.Background()
	embedder := &testenv.HashEmbedder{Dim: testDim}
	owner := testStore(t, testDim).WithOwner("team-a/docs")
	other := NewStore(owner.client, owner.alias, testDim).WithOwner("team-b/docs")

	rows := corpusRows(t, nil)[:20]
	if _, err := owner.Ingest(ctx, RowsOf(rows), embedder, "hash", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	gen, _, err := owner.Active(ctx)
	if err != nil || gen.Owner != "team-a/docs" {
		t.Fatalf("owner recorded %q (%v), want team-a/docs", gen.Owner, err)
	}

	_, err = other.Ingest(ctx, RowsOf(rows[:3]), embedder, "hash", SyncOptions{})
	var owned *OwnerError
	if !errors.As(err, &owned) || owned.Owner != "team-a/docs" || owned.Want != "team-b/docs" {
		t.Fatalf("the other store's ingestion: %v; want an OwnerError naming both stores", err)
	}
	// Another embedder would build a new generation and swap the alias:
	// refused as well.
	if _, err := other.Ingest(ctx, RowsOf(rows[:3]), embedder, "other-embedder", SyncOptions{}); !errors.Is(err, ErrOwnedByAnother) {
		t.Fatalf("the other store's rebuild: %v; want ErrOwnedByAnother", err)
	}
	if n, err := owner.Count(ctx, gen.Collection); err != nil || n != int64(len(rows)) {
		t.Fatalf("the owner's collection holds %d rows (%v), want its %d", n, err, len(rows))
	}

	vectors, err := embedder.Embed(ctx, []string{"application sync"})
	if err != nil {
		t.Fatal(err)
	}
	search := SearchRequest{Query: "application sync", Vector: vectors[0], Principals: []string{"group:staff"}, Candidates: 5}
	if _, err := other.HybridSearch(ctx, search); !errors.Is(err, ErrOwnedByAnother) {
		t.Errorf("the other store's search: %v; want ErrOwnedByAnother", err)
	}
	if hits, err := owner.HybridSearch(ctx, search); err != nil || len(hits) == 0 {
		t.Errorf("the owner's search: %d hits, %v", len(hits), err)
	}
}

// TestACollectionWithoutAnOwnerIsAdopted: a collection ingested before
// owners were recorded (or by a local run) belongs to the first store
// that ingests into it with an owner.
func TestACollectionWithoutAnOwnerIsAdopted(t *testing.T) {
	ctx := context.Background()
	embedder := &testenv.HashEmbedder{Dim: testDim}
	local := testStore(t, testDim)
	rows := corpusRows(t, nil)[:10]
	if _, err := local.Ingest(ctx, RowsOf(rows), embedder, "hash", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	adopter := NewStore(local.client, local.alias, testDim).WithOwner("team-a/docs")
	if _, err := adopter.Ingest(ctx, RowsOf(rows), embedder, "hash", SyncOptions{}); err != nil {
		t.Fatalf("adopting an unowned collection: %v", err)
	}
	if gen, _, err := adopter.Active(ctx); err != nil || gen.Owner != "team-a/docs" {
		t.Fatalf("owner after adoption %q (%v)", gen.Owner, err)
	}
	late := NewStore(local.client, local.alias, testDim).WithOwner("team-b/docs")
	if _, err := late.Ingest(ctx, RowsOf(rows), embedder, "hash", SyncOptions{}); !errors.Is(err, ErrOwnedByAnother) {
		t.Errorf("a second store after the adoption: %v; want ErrOwnedByAnother", err)
	}
}
