package knowledge

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/testenv"
)

// Searches that wait past the bound go to Milvus as one call with several
// queries; each caller must get exactly what it would have got alone,
// under its own ACL filter.
func TestCoalescedSearchesFindWhatEachFindsAlone(t *testing.T) {
	store := testStore(t, testDim)
	embedder := &testenv.HashEmbedder{Dim: testDim}
	if _, err := store.Ingest(context.Background(), RowsOf(aclRows(t)), embedder, "hash-64", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	queries := []string{"how often is the sync every month", "rotate the deploy keys", "salary bands", "a quoted group name", "who may read this", "payroll data review"}
	readers := [][]string{{"user:ann", "group:engineering", "public"}, {"group:hr"}}
	type turn struct {
		query      string
		principals []string
	}
	var turns []turn
	alone := map[string][]string{}
	for _, q := range queries {
		for _, r := range readers {
			turns = append(turns, turn{q, r})
			alone[fmt.Sprint(q, r)] = idsOf(search(t, store, embedder, q, r...))
		}
	}

	// Every turn searches each primitive once: a shape per primitive and reader.
	shapes := len(AllPrimitives) * len(readers)
	together := make([][]string, len(turns))
	sizes := coalesced(t, store.searches, shapes, shapes*(len(queries)-callsPerShape), len(turns), func(i int) {
		together[i] = idsOf(search(t, store, embedder, turns[i].query, turns[i].principals...))
	})
	for i, tr := range turns {
		if want := alone[fmt.Sprint(tr.query, tr.principals)]; !slices.Equal(together[i], want) {
			t.Errorf("%q as %v: coalesced %v, alone %v", tr.query, tr.principals, together[i], want)
		}
	}
	if slices.Max(sizes) < 2 {
		t.Errorf("call sizes %v: no search was coalesced", sizes)
	}
}

func idsOf(hits []Hit) []string {
	var ids []string
	for _, h := range hits {
		ids = append(ids, fmt.Sprintf("%s@%.4f", h.ID, h.Similarity))
	}
	return ids
}

// queued is how many reads wait in all of c's batches.
func queued[Shape comparable, Query, Result any](c *coalescer[Shape, Query, Result]) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, batches := range c.waiting {
		for _, b := range batches {
			n += len(b.queries)
		}
	}
	return n
}

// Parts lookups (and the exact cache's Current reads) that wait past the
// bound go as one query for the union of their rows; each caller must get
// its own rows only, under its own ACL filter.
func TestCoalescedPartsAndCurrentReadsGetTheirOwnRows(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	var rows []Row
	section, firstPart := map[string]string{}, map[string]string{}
	for _, doc := range []struct{ name, group string }{{"a1", "group:a"}, {"a2", "group:a"}, {"b1", "group:b"}} {
		long := "# " + doc.name + "\n\n" + strings.Repeat("Sync waves order the resources of "+doc.name+" during a sync. ", 60)
		split := rowsOf(t, []ingest.Document{{Source: doc.name + ".md", Content: long, Principals: []string{doc.group}}})
		section[doc.name], firstPart[doc.name] = split[0].ParentID, split[0].ID
		rows = append(rows, split...)
	}
	if _, err := store.Ingest(ctx, RowsOf(rows), &testenv.HashEmbedder{Dim: testDim}, "h", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	type lookup struct {
		group    string
		sections []string
	}
	lookups := []lookup{
		{"group:a", []string{"a1"}}, {"group:a", []string{"a2"}}, {"group:a", []string{"a1", "a2", "b1"}},
		{"group:a", []string{"b1"}}, {"group:b", []string{"a1", "b1"}}, {"group:b", []string{"b1"}},
		{"group:a", []string{"a2", "a1"}}, {"group:b", []string{"a2"}}, {"group:b", []string{"b1", "a2"}},
	}
	parts := func(l lookup) string {
		var ids []string
		for _, name := range l.sections {
			ids = append(ids, section[name])
		}
		got, err := store.Parts(ctx, ids, []string{l.group})
		if err != nil {
			t.Error(err)
		}
		var out []string
		for _, id := range slices.Sorted(maps.Keys(got)) {
			for _, r := range got[id] {
				out = append(out, fmt.Sprintf("%s/%d", r.Source, r.PartIndex))
			}
		}
		return strings.Join(out, " ")
	}
	alone := make([]string, len(lookups))
	for i, l := range lookups {
		alone[i] = parts(l)
	}

	together := make([]string, len(lookups))
	sizes := coalesced(t, store.parts, 2, len(lookups)-2*callsPerShape, len(lookups), func(i int) { together[i] = parts(lookups[i]) })
	for i, l := range lookups {
		if together[i] != alone[i] {
			t.Errorf("%v: coalesced %q, alone %q", l, together[i], alone[i])
		}
	}
	if slices.Max(sizes) < 2 {
		t.Errorf("call sizes %v: no lookup was coalesced", sizes)
	}

	// The exact cache's check (Current) reads rows by id and sections by
	// parent the same way.
	current := func(l lookup) string {
		var parents []string
		for _, name := range l.sections[1:] {
			parents = append(parents, section[name])
		}
		got, err := store.Current(ctx, []string{firstPart[l.sections[0]]}, parents, []string{l.group})
		if err != nil {
			t.Error(err)
		}
		var out []string
		for _, v := range got {
			out = append(out, v.ID)
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	for i, l := range lookups {
		alone[i] = current(l)
	}
	sizes = coalesced(t, store.current, 2, len(lookups)-2*callsPerShape, len(lookups), func(i int) { together[i] = current(lookups[i]) })
	for i, l := range lookups {
		if together[i] != alone[i] {
			t.Errorf("current %v: coalesced %q, alone %q", l, together[i], alone[i])
		}
	}
	if slices.Max(sizes) < 2 {
		t.Errorf("call sizes %v: no current read was coalesced", sizes)
	}
}

// coalesced runs read(0) … read(n-1) at once, with c's calls held until
// the first callsPerShape calls of each of shapes shapes are made and
// queued reads wait behind them; it returns the sizes of c's calls.
func coalesced[Shape comparable, Query, Result any](t *testing.T, c *coalescer[Shape, Query, Result], shapes, queuedReads, n int, read func(i int)) []int {
	t.Helper()
	gate := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	direct := c.run
	c.run = func(ctx context.Context, shape Shape, qs []Query) ([]Result, error) {
		mu.Lock()
		sizes = append(sizes, len(qs))
		mu.Unlock()
		<-gate
		return direct(ctx, shape, qs)
	}
	defer func() { c.run = direct }()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { read(i) })
	}
	waitFor(t, "reads to queue", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(sizes) == shapes*callsPerShape && queued(c) == queuedReads
	})
	close(gate)
	wg.Wait()
	return sizes
}
