package knowledge

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// heldSearches is a runSearch whose calls wait until the test releases
// them, recording each call's queries.
type heldSearches struct {
	mu      sync.Mutex
	calls   [][]entity.Vector
	release chan struct{}
	err     error
}

func newHeldSearches() *heldSearches { return &heldSearches{release: make(chan struct{})} }

// run answers each query with a result set whose one score is the query
// vector's first value, so a caller can tell its own result.
func (h *heldSearches) run(ctx context.Context, _ searchShape, queries []entity.Vector) ([]milvusclient.ResultSet, error) {
	h.mu.Lock()
	h.calls = append(h.calls, queries)
	h.mu.Unlock()
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if h.err != nil {
		return nil, h.err
	}
	out := make([]milvusclient.ResultSet, len(queries))
	for i, q := range queries {
		out[i] = milvusclient.ResultSet{ResultCount: 1, Scores: []float32{q.(entity.FloatVector)[0]}}
	}
	return out, nil
}

func (h *heldSearches) callSizes() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var sizes []int
	for _, c := range h.calls {
		sizes = append(sizes, len(c))
	}
	return sizes
}

// waitFor polls until cond holds, failing the test after a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type searchOutcome struct {
	score float32
	err   error
}

// searchAsync runs one search of value in the background.
func searchAsync(ctx context.Context, c *coalescer[searchShape, entity.Vector, milvusclient.ResultSet], shape searchShape, value float32) chan searchOutcome {
	out := make(chan searchOutcome, 1)
	go func() {
		rs, err := c.do(ctx, shape, entity.FloatVector{value})
		if err != nil {
			out <- searchOutcome{err: err}
			return
		}
		out <- searchOutcome{score: rs.Scores[0]}
	}()
	return out
}

func TestSearchesPastTheBoundShareOneCallAndKeepTheirResults(t *testing.T) {
	held := newHeldSearches()
	c := newCoalescer(held.run)
	ctx := context.Background()
	shape := searchShape{primitive: TextDense, filter: "acl_set in [1]", topK: 30}
	var outcomes []chan searchOutcome
	for i := range callsPerShape {
		outcomes = append(outcomes, searchAsync(ctx, c, shape, float32(i)))
	}
	waitFor(t, "the first calls", func() bool { return len(held.callSizes()) == callsPerShape })
	for i := callsPerShape; i < callsPerShape+5; i++ {
		outcomes = append(outcomes, searchAsync(ctx, c, shape, float32(i)))
	}
	// Another filter is another shape: it never waits for this one's calls.
	other := searchAsync(ctx, c, searchShape{primitive: TextDense, filter: "acl_set in [2]", topK: 30}, 99)
	waitFor(t, "the waiting searches", func() bool { return queued(c) == 5 && len(held.callSizes()) == callsPerShape+1 })

	close(held.release)
	for i, out := range outcomes {
		if got := <-out; got.err != nil || got.score != float32(i) {
			t.Errorf("search %d got %v, %v; want its own result", i, got.score, got.err)
		}
	}
	if got := <-other; got.score != 99 {
		t.Errorf("other shape's search got %v", got)
	}
	sizes := held.callSizes()
	if len(sizes) != callsPerShape+2 || sizes[len(sizes)-1] != 5 {
		t.Errorf("calls of sizes %v, want %d single calls, the other shape's, then one of 5", sizes, callsPerShape)
	}
}

func TestAWaitingSearchLeavesWhenItsCallerStops(t *testing.T) {
	held := newHeldSearches()
	c := newCoalescer(held.run)
	shape := searchShape{primitive: TextSparse, filter: "f", topK: 10}
	for i := range callsPerShape {
		searchAsync(context.Background(), c, shape, float32(i))
	}
	waitFor(t, "the first calls", func() bool { return len(held.callSizes()) == callsPerShape })

	stopped, stop := context.WithCancel(context.Background())
	gone := searchAsync(stopped, c, shape, 10)
	staying := searchAsync(context.Background(), c, shape, 11)
	waitFor(t, "two waiting", func() bool { return queued(c) == 2 })
	stop()
	if got := <-gone; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("stopped search returned %v, want context.Canceled", got)
	}
	close(held.release)
	if got := <-staying; got.err != nil || got.score != 11 {
		t.Errorf("the search that stayed got %v", got)
	}

	// A batch everyone left is never sent.
	held2 := newHeldSearches()
	c2 := newCoalescer(held2.run)
	for i := range callsPerShape {
		searchAsync(context.Background(), c2, shape, float32(i))
	}
	waitFor(t, "the first calls", func() bool { return len(held2.callSizes()) == callsPerShape })
	stopped2, stop2 := context.WithCancel(context.Background())
	gone2 := searchAsync(stopped2, c2, shape, 20)
	waitFor(t, "one waiting", func() bool { return queued(c2) == 1 })
	stop2()
	<-gone2
	close(held2.release)
	waitFor(t, "the calls to end", func() bool {
		c2.mu.Lock()
		defer c2.mu.Unlock()
		return len(c2.inFlight) == 0 && len(c2.waiting) == 0
	})
	if sizes := held2.callSizes(); len(sizes) != callsPerShape {
		t.Errorf("calls of sizes %v: the abandoned batch was sent", sizes)
	}
}

func TestACoalescedCallsErrorReachesEveryMember(t *testing.T) {
	held := newHeldSearches()
	held.err = errors.New("milvus: unavailable")
	c := newCoalescer(held.run)
	shape := searchShape{primitive: TextDense, filter: "f", topK: 10}
	var outcomes []chan searchOutcome
	for i := range callsPerShape + 3 {
		outcomes = append(outcomes, searchAsync(context.Background(), c, shape, float32(i)))
		if i == callsPerShape-1 {
			waitFor(t, "the first calls", func() bool { return len(held.callSizes()) == callsPerShape })
		}
	}
	waitFor(t, "three waiting", func() bool { return queued(c) == 3 })
	close(held.release)
	for i, out := range outcomes {
		if got := <-out; !errors.Is(got.err, held.err) {
			t.Errorf("search %d returned %v, want the call's error", i, got)
		}
	}
}
