package retrieval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// sharedIndex serves its calls together, as Milvus Lite does: a call takes
// perCall for each call in flight when it starts, itself included, so the
// more are sent at once the slower each one is.
type sharedIndex struct {
	fakeIndex
	perCall  time.Duration
	inFlight atomic.Int32
	most     atomic.Int32
}

func (s *sharedIndex) HybridSearch(ctx context.Context, _ knowledge.SearchRequest) ([]knowledge.Hit, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	select {
	case <-time.After(time.Duration(n) * s.perCall):
		return []knowledge.Hit{hit("a1", "a", 1, "prose")}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// burst runs n searches at once, each its own question, and returns their
// errors and the longest store_queue stage.
func burst(s *Searcher, n int) (errs []error, longestQueue time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := s.Search(ctx, fmt.Sprintf("question %d", i), []string{"group:staff"})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			longestQueue = max(longestQueue, r.Timings["store_queue"])
		})
	}
	wg.Wait()
	return errs, longestQueue
}

// A burst of searches against a store that slows with every call in
// flight: unbounded, each call passes the search step's deadline; with
// slots, the calls past the bound wait outside that deadline and every
// search is served.
func TestStoreSlotsTurnABurstIntoAQueue(t *testing.T) {
	const searches = 24
	gen := int64(1)
	for _, tc := range []struct {
		slots      int
		wantFailed bool
	}{{slots: 0, wantFailed: true}, {slots: 2}} {
		t.Run(fmt.Sprintf("slots=%d", tc.slots), func(t *testing.T) {
			index := &sharedIndex{perCall: 20 * time.Millisecond}
			s := newSearcher(index, &gen)
			s.Timeouts.Search = 200 * time.Millisecond // less than 24 calls × 20 ms
			s.Slots = NewStoreSlots(tc.slots)
			errs, longestQueue := burst(s, searches)
			if tc.wantFailed {
				if len(errs) == 0 || !errors.Is(errs[0], context.DeadlineExceeded) {
					t.Fatalf("unbounded: %d of %d searches failed (%v), want the step deadline passed", len(errs), searches, errs)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("%d of %d searches failed, first: %v", len(errs), searches, errs[0])
			}
			if most := index.most.Load(); most > int32(tc.slots) {
				t.Errorf("%d calls were in flight at once, want at most %d", most, tc.slots)
			}
			if longestQueue < s.Timeouts.Search {
				t.Errorf("the longest store_queue stage is %s; the last of the burst waits longer than the step deadline", longestQueue)
			}
		})
	}
}

// A search waiting for a slot ends with its caller's context, and says so.
func TestAStoreSlotWaitEndsWithTheCaller(t *testing.T) {
	gen := int64(1)
	s := newSearcher(&stalledIndex{}, &gen)
	s.Slots = NewStoreSlots(1)
	holder, release := context.WithCancel(context.Background())
	defer release()
	go func() { _, _ = s.Search(holder, "holds the slot", []string{"group:staff"}) }()
	for len(s.Slots.slots) == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Search(ctx, "waits", []string{"group:staff"})
	if err == nil || !strings.Contains(err.Error(), "1 knowledge-store slots") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the wait for a store slot ended by the caller's deadline", err)
	}
}
