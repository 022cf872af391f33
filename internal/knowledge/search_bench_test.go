package knowledge

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/ragroute/ragroute/internal/testenv"
)

// benchDim is the dimension of the default local embedder (all-MiniLM-L6-v2).
const benchDim = 384

// BenchmarkSearch measures one search on the eval corpus (3,400 chunks) in
// Milvus Lite: the unfiltered dense search as the yardstick, and what a
// turn runs (the four primitives under the ACL filter). The corpus is
// split between two ACL groups so the filter has something to deny.
func BenchmarkSearch(b *testing.B) {
	store := testStore(b, benchDim)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	embedder := &testenv.HashEmbedder{Dim: benchDim}
	rows := corpusRows(b, nil)
	for i := range rows {
		if i%2 == 1 {
			rows[i].ACL = []string{"group:ops"}
		}
	}
	if _, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-384", SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	query := "How do I roll back an application to an earlier sync?"
	vectors, _ := embedder.Embed(ctx, []string{query})
	cases := []struct {
		name       string
		primitives []Primitive
		principals []string
	}{
		{"dense-unfiltered", []Primitive{TextDense}, nil},
		{"dense-acl", []Primitive{TextDense}, []string{"group:staff", "public"}},
		{"bm25-acl", []Primitive{TextSparse}, []string{"group:staff", "public"}},
		{"hybrid4-acl", AllPrimitives, []string{"group:staff", "public"}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			req := SearchRequest{Query: query, Vector: vectors[0], Principals: tc.principals, Primitives: tc.primitives,
				Candidates: 12, RRFK: 60}
			search := func() (int, error) {
				hits, err := store.HybridSearch(ctx, req)
				return len(hits), err
			}
			if tc.principals == nil {
				search = func() (int, error) { return unfilteredDense(ctx, store, req) }
			}
			var samples []time.Duration
			for b.Loop() {
				t := time.Now()
				n, err := search()
				if err != nil || n == 0 {
					b.Fatalf("search: %d hits, %v", n, err)
				}
				samples = append(samples, time.Since(t))
			}
			slices.Sort(samples)
			b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50_ms")
		})
	}
}

// unfilteredDense is the yardstick no route ever runs: one dense search
// with no filter, the same output fields.
func unfilteredDense(ctx context.Context, store *Store, req SearchRequest) (int, error) {
	rs, err := store.client.Search(ctx, milvusclient.NewSearchOption(store.alias, req.Candidates,
		[]entity.Vector{entity.FloatVector(req.Vector)}).WithANNSField(FieldTextDense).
		WithSearchParam("metric_type", string(entity.COSINE)).
		WithOutputFields(append(outputFields, FieldTextDense, FieldTitleDense)...))
	if err != nil {
		return 0, err
	}
	return rs[0].ResultCount, nil
}
