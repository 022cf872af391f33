package knowledge

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/testenv"
)

// aclRows are chunks of documents readable by different principals.
func aclRows(t *testing.T) []Row {
	t.Helper()
	docs := []ingest.Document{
		{Source: "eng.md", Principals: []string{"group:engineering"}, Content: "# Deploy keys\n\nRotate the deploy keys of the sync controller every month."},
		{Source: "hr.md", Principals: []string{"group:hr"}, Content: "# Salaries\n\nSalary bands and the sync of payroll data are reviewed every month."},
		{Source: "quote.md", Principals: []string{`group:o"brien`}, Content: "# Quoted\n\nA document only for a group whose name has a quote; sync it monthly."},
		{Source: "public.md", Principals: []string{"public"}, Content: "# Welcome\n\nEveryone may read how the sync works every month."},
	}
	return rowsOf(t, docs)
}

func search(t *testing.T, store *Store, embedder *testenv.HashEmbedder, query string, principals ...string) []Hit {
	t.Helper()
	vectors, _ := embedder.Embed(context.Background(), []string{query})
	hits, err := store.HybridSearch(context.Background(), SearchRequest{
		Query: query, Vector: vectors[0], Principals: principals, Candidates: 10, RRFK: 60,
	})
	if err != nil {
		t.Fatalf("search %q as %v: %v", query, principals, err)
	}
	return hits
}

func sourcesOf(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Source)
	}
	slices.Sort(out)
	return out
}

func TestHybridSearchReturnsOnlyWhatPrincipalsMaySee(t *testing.T) {
	store := testStore(t, testDim)
	embedder := &testenv.HashEmbedder{Dim: testDim}
	if _, err := store.Ingest(context.Background(), RowsOf(aclRows(t)), embedder, "hash-64", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		principals []string
		want       []string
	}{
		{"engineer", []string{"user:ann", "group:engineering", "public"}, []string{"eng.md", "public.md"}},
		{"hr", []string{"group:hr"}, []string{"hr.md"}},
		{"no principals", nil, nil},
		{"quote in a group name matches exactly", []string{`group:o"brien`}, []string{"quote.md"}},
		{"closing the literal and the list", []string{`group:x"]) or (1 == 1) or array_contains_any(acl, ["`}, nil},
		{"backslash before the quote", []string{`group:x\`, `"] or id != "`}, nil},
		{"a prefix of a real group", []string{"group:eng"}, nil},
		{"json-looking list", []string{`["group:hr","public"]`}, nil},
		{"control character", []string{"group:hr\n"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hits := search(t, store, embedder, "how often is the sync every month", tc.principals...)
			for _, h := range hits {
				if !slices.ContainsFunc(h.ACL, func(p string) bool { return slices.Contains(tc.principals, p) }) {
					t.Errorf("%s (ACL %v) leaked to %q", h.Source, h.ACL, tc.principals)
				}
			}
			if got := sourcesOf(hits); !slices.Equal(got, tc.want) {
				t.Errorf("sources %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHitsCarryTheirSimilarityToTheQuery(t *testing.T) {
	store := testStore(t, testDim)
	embedder := &testenv.HashEmbedder{Dim: testDim}
	rows := aclRows(t)
	if _, err := store.Ingest(context.Background(), RowsOf(rows), embedder, "hash-64", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	everyone := []string{"group:engineering", "group:hr", "public"}
	// The exact embedded text of a chunk is as similar as it gets; the
	// others less.
	var deploy Row
	for _, r := range rows {
		if r.Source == "eng.md" {
			deploy = r
		}
	}
	for _, h := range search(t, store, embedder, deploy.EmbeddedText(), everyone...) {
		want, _ := embedder.Embed(context.Background(), []string{deploy.EmbeddedText(), h.EmbeddedText(), h.TitlePath()})
		text, title := Cosine(want[0], want[1]), Cosine(want[0], want[2])
		if d := h.Similarity - max(text, title); d > 1e-4 || d < -1e-4 {
			t.Errorf("%s: similarity %.4f, want the closer of text %.4f and title %.4f", h.Source, h.Similarity, text, title)
		}
		if h.Source == "eng.md" && h.Similarity < 0.999 {
			t.Errorf("the chunk searched by its own text has similarity %.4f", h.Similarity)
		}
		if h.Source != "eng.md" && h.Similarity > 0.9 {
			t.Errorf("%s is nearly identical (%.4f) to another document's text", h.Source, h.Similarity)
		}
	}
}

func TestEmbedderChangeSwapsAliasWhileSearchesContinue(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	rows := corpusRows(t, nil)
	first, err := store.Ingest(ctx, RowsOf(rows), &testenv.HashEmbedder{Dim: testDim}, "model-a", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Routes keep searching while the new generation is built and swapped.
	var searches, failures atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		embedder := &testenv.HashEmbedder{Dim: testDim}
		for {
			select {
			case <-stop:
				return
			default:
			}
			vectors, _ := embedder.Embed(ctx, []string{"sync waves"})
			hits, err := store.HybridSearch(ctx, SearchRequest{Query: "sync waves", Vector: vectors[0],
				Principals: []string{"group:staff"}, Candidates: 5})
			searches.Add(1)
			if err != nil || len(hits) == 0 {
				failures.Add(1)
				t.Logf("search during swap: %d hits, %v", len(hits), err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	second, err := store.Ingest(ctx, RowsOf(rows), &testenv.HashEmbedder{Dim: testDim}, "model-b", SyncOptions{})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !second.NewGeneration || second.Generation.Number != first.Generation.Number+1 || second.Written != len(rows) {
		t.Fatalf("embedder change: %+v, want generation %d with all %d chunks", second, first.Generation.Number+1, len(rows))
	}
	active, _, err := store.Active(ctx)
	if err != nil || active.Collection != second.Generation.Collection || active.Embedder != "model-b" {
		t.Fatalf("alias points at %+v (%v)", active, err)
	}
	if exists, _ := store.client.HasCollection(ctx, milvusclient.NewHasCollectionOption(first.Generation.Collection)); exists {
		t.Errorf("replaced generation %s was not dropped", first.Generation.Collection)
	}
	if searches.Load() < 3 || failures.Load() > 0 {
		t.Errorf("%d searches during the swap, %d failed", searches.Load(), failures.Load())
	}
}

func TestForeignCollectionIsRefusedByName(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	if _, err := store.Ingest(ctx, RowsOf(aclRows(t)), &testenv.HashEmbedder{Dim: testDim}, "hash-64", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	// Same embedder fingerprint, other vectors: not a collection to write into.
	wrongDim := NewStore(store.client, store.alias, 32)
	_, err := wrongDim.Ingest(ctx, RowsOf(aclRows(t)), &testenv.HashEmbedder{Dim: 32}, "hash-64", SyncOptions{})
	if err == nil || !strings.Contains(err.Error(), "has 64 dimensions, want 32") {
		t.Fatalf("ingest into a 64-dimensional collection as 32: %v", err)
	}
}

// failingEmbedder fails after a number of calls, like an embedder that
// goes away mid-run.
type failingEmbedder struct {
	testenv.HashEmbedder
	failAfter int
}

func (f *failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.Calls >= f.failAfter {
		return nil, errors.New("embedder went away")
	}
	return f.HashEmbedder.Embed(ctx, texts)
}

func TestFailedRebuildLeavesTheAliasAndResumes(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	rows := corpusRows(t, nil)
	first, err := store.Ingest(ctx, RowsOf(rows), &testenv.HashEmbedder{Dim: testDim}, "model-a", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	failing := &failingEmbedder{HashEmbedder: testenv.HashEmbedder{Dim: testDim}, failAfter: 3}
	failed, err := store.Ingest(ctx, RowsOf(rows), failing, "model-b", SyncOptions{BatchSize: 100})
	if err == nil {
		t.Fatal("ingest with a failing embedder succeeded")
	}
	// Batches in flight when the embedder failed may or may not have been
	// written; the ones reported written must be kept.
	if failed.Written < 100 || failed.Written > 300 || failed.Written%100 != 0 {
		t.Fatalf("the failed rebuild reports %d chunks written, want whole batches before the 4th embedding call", failed.Written)
	}
	active, _, err := store.Active(ctx)
	if err != nil || active.Collection != first.Generation.Collection {
		t.Fatalf("after a failed rebuild the alias points at %+v (%v), want %s", active, err, first.Generation.Collection)
	}
	resumed, err := store.Ingest(ctx, RowsOf(rows), &testenv.HashEmbedder{Dim: testDim}, "model-b", SyncOptions{BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	// (An upsert cancelled as the run failed may still have landed: kept,
	// never counted twice.)
	if resumed.Unchanged < failed.Written || resumed.Written+resumed.Unchanged != len(rows) || resumed.Generation.Number != first.Generation.Number+1 {
		t.Fatalf("resumed rebuild %+v: want the %d chunks written before the failure kept", resumed, failed.Written)
	}
}

func TestPartsComeBackInOrderUnderTheACL(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	long := "# Long\n\n" + strings.Repeat("Sync waves order the resources of an application during a sync. ", 60)
	rows := rowsOf(t, []ingest.Document{{Source: "long.md", Content: long, Principals: []string{"group:a"}}})
	if len(rows) < 3 {
		t.Fatalf("want a split section, got %d rows", len(rows))
	}
	other := rowsOf(t, []ingest.Document{{Source: "other.md", Content: strings.Replace(long, "Long", "Other", 1), Principals: []string{"group:b"}}})
	if _, err := store.Ingest(ctx, RowsOf(append(slices.Clone(rows), other...)), &testenv.HashEmbedder{Dim: testDim}, "h", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	// One query for both sections; each caller gets only its own.
	both := []string{rows[0].ParentID, other[0].ParentID}
	sections, err := store.Parts(ctx, both, []string{"group:a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sections) != 1 || len(sections[other[0].ParentID]) != 0 {
		t.Fatalf("group:a got sections %v, want only %s", keys(sections), rows[0].ParentID)
	}
	parts := sections[rows[0].ParentID]
	if len(parts) != len(rows) {
		t.Fatalf("%d parts, want %d", len(parts), len(rows))
	}
	for i, p := range parts {
		if p.PartIndex != int64(i+1) || p.Text != rows[i].Text {
			t.Errorf("part %d: index %d", i, p.PartIndex)
		}
	}
	if none, err := store.Parts(ctx, both[:1], []string{"group:b"}); err != nil || len(none) != 0 {
		t.Errorf("parts leaked to group:b: %d (%v)", len(none), err)
	}
}

func keys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// A collection built before acl_set existed keeps serving, filtered on the
// ACL array, and the next ingestion replaces it with a generation of the
// current schema.
func TestACollectionOfTheOldSchemaIsFilteredAndReplaced(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	embedder := &testenv.HashEmbedder{Dim: testDim}
	rows := aclRows(t)
	if err := store.embedInto(ctx, rows, embedder); err != nil {
		t.Fatal(err)
	}
	// Generation 1 as the previous schema made it: no acl_set, no flagged,
	// no schema property.
	legacy := generationName(store.alias, 1)
	schema := Schema(legacy, testDim)
	schema.Fields = slices.DeleteFunc(schema.Fields, func(f *entity.Field) bool { return f.Name == FieldACLSet || f.Name == FieldFlagged })
	opt := milvusclient.NewCreateCollectionOption(legacy, schema).WithProperty(embedderProperty, "hash-64").
		WithConsistencyLevel(entity.ClStrong)
	for field, idx := range indexes() {
		opt = opt.WithIndexOptions(milvusclient.NewCreateIndexOption(legacy, field, idx))
	}
	if err := store.client.CreateCollection(ctx, opt); err != nil {
		t.Fatal(err)
	}
	columns := slices.DeleteFunc(store.columns(rows), func(c column.Column) bool { return c.Name() == FieldACLSet || c.Name() == FieldFlagged })
	if _, err := store.client.Insert(ctx, milvusclient.NewColumnBasedInsertOption(legacy, columns...)); err != nil {
		t.Fatal(err)
	}
	if err := store.client.CreateAlias(ctx, milvusclient.NewCreateAliasOption(legacy, store.alias)); err != nil {
		t.Fatal(err)
	}
	if state, err := store.State(ctx); err != nil || state.SchemaErr != nil || state.Rows != int64(len(rows)) {
		t.Fatalf("old-schema state %+v, %v: want it served as it is", state, err)
	}
	for _, who := range [][]string{{"group:hr"}, {"group:eng"}, nil} {
		hits := search(t, store, embedder, "how often is the sync every month", who...)
		for _, h := range hits {
			if !slices.ContainsFunc(h.ACL, func(p string) bool { return slices.Contains(who, p) }) {
				t.Errorf("old schema: %s (ACL %v) leaked to %v", h.Source, h.ACL, who)
			}
		}
		if len(who) == 1 && who[0] == "group:hr" && !slices.Equal(sourcesOf(hits), []string{"hr.md"}) {
			t.Errorf("old schema: hr sees %v, want [hr.md]", sourcesOf(hits))
		}
	}

	result, err := store.Ingest(ctx, RowsOf(aclRows(t)), embedder, "hash-64", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !result.NewGeneration || result.Generation.Number != 2 || result.Generation.Schema != schemaVersion {
		t.Fatalf("ingest over the old schema: %+v, want generation 2 of schema %d", result, schemaVersion)
	}
	store.forgetACLTable()
	if got := sourcesOf(search(t, store, embedder, "how often is the sync every month", "group:hr")); !slices.Equal(got, []string{"hr.md"}) {
		t.Errorf("new schema: hr sees %v, want [hr.md]", got)
	}
}

// Readers of a new ACL set find its rows once the sync that added it is
// done; everyone else still finds nothing of them.
func TestANewACLSetIsVisibleToItsReadersOnly(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	embedder := &testenv.HashEmbedder{Dim: testDim}
	rows := aclRows(t)
	if _, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-64", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	// Warm the reader's table, then add a set it has not seen.
	if got := sourcesOf(search(t, store, embedder, "payroll sync", "group:finance")); len(got) != 0 {
		t.Fatalf("finance sees %v before any finance document exists", got)
	}
	more := append(rows, rowsOf(t, []ingest.Document{{Source: "finance.md", Principals: []string{"group:finance"},
		Content: "# Budgets\n\nThe finance team syncs budgets every month."}})...)
	if _, err := store.Ingest(ctx, RowsOf(more), embedder, "hash-64", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := sourcesOf(search(t, store, embedder, "finance budgets sync", "group:finance")); !slices.Equal(got, []string{"finance.md"}) {
		t.Errorf("finance sees %v, want [finance.md]", got)
	}
	// Another replica (its own Store) reads the table fresh.
	replica := NewStore(store.client, store.alias, testDim)
	if got := sourcesOf(search(t, replica, embedder, "finance budgets sync", "group:finance")); !slices.Equal(got, []string{"finance.md"}) {
		t.Errorf("another replica: finance sees %v, want [finance.md]", got)
	}
	for _, h := range search(t, replica, embedder, "finance budgets sync", "group:hr", "public") {
		if h.Source == "finance.md" {
			t.Errorf("finance.md leaked to hr")
		}
	}
}
