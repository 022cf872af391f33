package retrieval

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/testenv"
)

// fakeIndex answers searches from a fixed list and counts calls.
type fakeIndex struct {
	hits     []knowledge.Hit
	parts    map[string][]knowledge.Row
	searches int
}

func (f *fakeIndex) HybridSearch(_ context.Context, _ knowledge.SearchRequest) ([]knowledge.Hit, error) {
	f.searches++
	return f.hits, nil
}

func (f *fakeIndex) Parts(_ context.Context, parentIDs []string, _ []string) (map[string][]knowledge.Row, error) {
	out := map[string][]knowledge.Row{}
	for _, id := range parentIDs {
		out[id] = f.parts[id]
	}
	return out, nil
}

func hit(id, doc string, rank int, kind string) knowledge.Hit {
	// A hit ranked first in all four primitives scores 4/(k+1); similarity
	// falls with the rank.
	return knowledge.Hit{Score: float32(4.0 / float64(60+rank)), Similarity: 0.8 - 0.05*float32(rank), Row: knowledge.Row{ID: id, DocID: doc, Source: doc + ".md", Kind: kind, Text: id, PartCount: 1, ContentHash: "hash-" + id}}
}

func newSearcher(index Index, generation *int64) *Searcher {
	return &Searcher{
		Index: index, Embedder: &testenv.HashEmbedder{Dim: 8}, Reranker: KeepOrder{},
		Cache:      NewMemoryCache(10, time.Minute, time.Now),
		Settings:   SearchSettings{Candidates: 10, RRFK: 60, SimilarityFloor: 0.2, StrictFloor: 0.35, MaxFragments: 3},
		Generation: func() int64 { return *generation },
	}
}

func TestSearchFiltersAndDiversifies(t *testing.T) {
	index := &fakeIndex{hits: []knowledge.Hit{
		hit("a1", "a", 1, "prose"), hit("a2", "a", 2, "prose"), hit("b1", "b", 3, "screen"),
		hit("c1", "c", 4, "prose"), hit("d1", "d", 5, "prose"),
		{Score: 0.06, Similarity: 0.1, Row: knowledge.Row{ID: "weak", DocID: "w", PartCount: 1}},
	}}
	gen := int64(1)
	s := newSearcher(index, &gen)
	r, err := s.Search(context.Background(), "how does it work", []string{"group:staff"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range r.Fragments {
		ids = append(ids, f.ID)
	}
	// One fragment per document, the weak hit under the floors, at most 3.
	if strings.Join(ids, ",") != "a1,b1,c1" {
		t.Errorf("fragments %v", ids)
	}
	// A screen question keeps its best candidate first and puts the
	// screen fragment right after it (the lab's route-v1 row puts it
	// first with its own step: eval/lab's screenFirst).
	r, _ = s.Search(context.Background(), "where is the sync button on the page", []string{"group:staff"})
	if r.Intent != IntentScreen || r.Fragments[0].ID != "a1" || r.Fragments[1].ID != "b1" {
		t.Errorf("screen question: intent %s, fragments %v", r.Intent, r.Fragments)
	}
	if _, err := s.Search(context.Background(), "anything", nil); err == nil {
		t.Error("a search without principals ran")
	}
}

func TestExactCacheKeysOnQueryPrincipalsAndGeneration(t *testing.T) {
	index := &fakeIndex{hits: []knowledge.Hit{hit("a1", "a", 1, "prose")}}
	gen := int64(1)
	s := newSearcher(index, &gen)
	ctx := context.Background()
	search := func(q string, principals ...string) bool {
		r, err := s.Search(ctx, q, principals)
		if err != nil {
			t.Fatal(err)
		}
		return r.CacheHit
	}
	if search("How do sync waves work?", "group:a", "public") {
		t.Fatal("first search hit the cache")
	}
	if !search("how do  sync waves WORK", "public", "group:a") || index.searches != 1 {
		t.Error("same normalised query and principals missed the cache")
	}
	if search("how do sync waves work", "group:b", "public") {
		t.Error("another identity shared a cache entry")
	}
	gen = 2
	if search("how do sync waves work", "group:a", "public") {
		t.Error("a new index generation served a cached entry")
	}
}

func TestReassemblyJoinsPartsWithoutTheOverlap(t *testing.T) {
	parts := []knowledge.Row{
		{ID: "p1", ParentID: "sec", PartIndex: 1, PartCount: 3, Text: "First part ends here.\nwith these words"},
		{ID: "p2", ParentID: "sec", PartIndex: 2, PartCount: 3, Text: "ends here.\nwith these words\n\nSecond part."},
		{ID: "p3", ParentID: "sec", PartIndex: 3, PartCount: 3, Text: "Second part.\n\nThird part."},
	}
	h := hit("p2", "a", 1, "prose")
	h.ParentID, h.PartCount, h.Text = "sec", 3, parts[1].Text
	index := &fakeIndex{hits: []knowledge.Hit{h}, parts: map[string][]knowledge.Row{"sec": parts}}
	gen := int64(1)
	r, err := newSearcher(index, &gen).Search(context.Background(), "parts", []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	want := "First part ends here.\nwith these words\n\nSecond part.\n\nThird part."
	if f := r.Fragments[0]; !f.Reassembled || f.Text != want || f.ID != "sec" {
		t.Errorf("reassembled %+v\ntext %q\nwant %q", f, f.Text, want)
	}
}

func TestMemoryCacheIsBoundedAndExpires(t *testing.T) {
	now := time.Unix(0, 0)
	c := NewMemoryCache(2, time.Minute, func() time.Time { return now })
	ctx := context.Background()
	c.Put(ctx, "a", []Fragment{{ID: "a"}})
	c.Put(ctx, "b", []Fragment{{ID: "b"}})
	c.Get(ctx, "a")
	c.Put(ctx, "c", []Fragment{{ID: "c"}}) // evicts b, the least recently used
	if _, ok := c.Get(ctx, "b"); ok {
		t.Error("cache grew past its bound")
	}
	now = now.Add(2 * time.Minute)
	if _, ok := c.Get(ctx, "a"); ok {
		t.Error("an expired entry was served")
	}
}

func TestUnrelatedQuestionFindsNothingWhateverItsRank(t *testing.T) {
	// Ranked first in every primitive, yet unrelated in meaning: what the
	// hybrid search returns for a question the documents do not answer.
	top := hit("a1", "a", 1, "prose")
	top.Similarity = 0.12
	near := hit("b1", "b", 2, "prose")
	near.Similarity = 0.3
	gen := int64(1)
	s := newSearcher(&fakeIndex{hits: []knowledge.Hit{top, near}}, &gen)
	r, err := s.Search(context.Background(), "who won the match", []string{"group:staff"})
	if err != nil {
		t.Fatal(err)
	}
	// b1 passes the similarity floor (0.2) but not the strict floor (0.35).
	if len(r.Fragments) != 0 {
		t.Errorf("fragments %v for an unrelated question", r.Fragments)
	}
	near.Similarity = 0.5
	s = newSearcher(&fakeIndex{hits: []knowledge.Hit{top, near}}, &gen)
	if r, _ = s.Search(context.Background(), "how does b work", []string{"group:staff"}); len(r.Fragments) != 1 || r.Fragments[0].ID != "b1" || r.Fragments[0].Score != 0.5 {
		t.Errorf("fragments %+v, want b1 scored by its similarity", r.Fragments)
	}
}

// currentOf is Index.Current over rows: those among ids or parts of
// parents that principals may read (any, for a row without an ACL).
func currentOf(rows []knowledge.Row, ids, parents, principals []string) []knowledge.RowVersion {
	var out []knowledge.RowVersion
	for _, r := range rows {
		readable := len(r.ACL) == 0 || slices.ContainsFunc(principals, func(p string) bool { return slices.Contains(r.ACL, p) })
		if readable && (slices.Contains(ids, r.ID) || (r.ParentID != "" && slices.Contains(parents, r.ParentID))) {
			out = append(out, rowVersion(r))
		}
	}
	return out
}

func (f *fakeIndex) Current(_ context.Context, ids, parents, principals []string) ([]knowledge.RowVersion, error) {
	rows := rowsOf(f.hits)
	for _, parts := range f.parts {
		rows = append(rows, parts...)
	}
	return currentOf(rows, ids, parents, principals), nil
}

func rowsOf(hits []knowledge.Hit) []knowledge.Row {
	rows := make([]knowledge.Row, len(hits))
	for i, h := range hits {
		rows[i] = h.Row
	}
	return rows
}

// TestCacheHitIsServedOnlyWhileTheStoreServesIt: a re-ingestion within one
// generation changes no cache key, so a hit must be checked against what
// the store serves the caller now: a changed, deleted or narrowed row is a
// miss, and the search runs again.
func TestCacheHitIsServedOnlyWhileTheStoreServesIt(t *testing.T) {
	bob := []string{"public", "user:bob", "group:eng"}
	edits := []struct {
		name string
		edit func(*knowledge.Hit) bool // false: the row is deleted
	}{
		{"text changed", func(h *knowledge.Hit) bool { h.ContentHash = "hash-edited"; return true }},
		{"deleted", func(*knowledge.Hit) bool { return false }},
		// The hash kept: what refuses it is the caller's ACL filter.
		{"ACL narrowed", func(h *knowledge.Hit) bool { h.ACL = []string{"group:hr"}; return true }},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			first := hit("a", "doc", 1, "prose")
			first.ACL = []string{"group:eng"}
			index := &fakeIndex{hits: []knowledge.Hit{first}}
			gen := int64(1)
			s := newSearcher(index, &gen)
			search := func() Retrieval {
				t.Helper()
				r, err := s.Search(context.Background(), "how do we deploy", bob)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			search()
			if r := search(); !r.CacheHit || index.searches != 1 {
				t.Fatalf("unchanged store: cache hit %v after %d searches, want a hit after 1", r.CacheHit, index.searches)
			}
			if !e.edit(&index.hits[0]) {
				index.hits = nil
			}
			if r := search(); r.CacheHit || index.searches != 2 {
				t.Errorf("after the row was %s: cache hit %v after %d searches; want the search to run again", e.name, r.CacheHit, index.searches)
			}
		})
	}
}

// admittingEmbedder holds every admission until the test lets it.
type admittingEmbedder struct {
	testenv.HashEmbedder
	admissions chan struct{}
	open       chan struct{}
}

func (a *admittingEmbedder) Admit(ctx context.Context) error {
	a.admissions <- struct{}{}
	select {
	case <-a.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Every search waits for the embedder to admit its turn, before its
// query is embedded (a busy check delays the turn, not its query's
// embedding, which then goes first) or, when the cache serves it, before
// it is served: its answer's check will need the embedder. The wait is
// bounded by the turn's context, not the embed step's deadline.
func TestSearchesWaitForTheEmbeddersAdmission(t *testing.T) {
	index := &fakeIndex{hits: []knowledge.Hit{hit("a1", "a", 1, "prose")}}
	gen := int64(1)
	s := newSearcher(index, &gen)
	s.Timeouts.Embed = 20 * time.Millisecond
	embedder := &admittingEmbedder{HashEmbedder: testenv.HashEmbedder{Dim: 8}, admissions: make(chan struct{}, 2), open: make(chan struct{})}
	s.Embedder = embedder
	ctx := context.Background()
	for _, want := range []bool{false, true} {
		done := make(chan Retrieval, 1)
		go func() {
			r, err := s.Search(ctx, "how do sync waves work", []string{"public"})
			if err != nil {
				t.Error(err)
			}
			done <- r
		}()
		<-embedder.admissions
		select {
		case <-done:
			t.Fatalf("cached %v: the search returned before its admission", want)
		case <-time.After(100 * time.Millisecond): // past the embed step's deadline: the wait is not that step's
		}
		embedder.open <- struct{}{}
		if r := <-done; r.CacheHit != want || len(r.Fragments) != 1 {
			t.Errorf("admitted: cache hit %v (want %v), %d fragments", r.CacheHit, want, len(r.Fragments))
		}
	}
	if index.searches != 1 {
		t.Errorf("%d hybrid searches, want 1", index.searches)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := s.Search(short, "how do sync waves work", []string{"public"}); err == nil {
		t.Error("a cached search past its context was served")
	}
}
