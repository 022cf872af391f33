package knowledge

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

func TestEmbedClockCountsOverlappingCallsOnce(t *testing.T) {
	now := time.Unix(0, 0)
	c := embedClock{now: func() time.Time { return now }}
	tick := func(ms int) { now = now.Add(time.Duration(ms) * time.Millisecond) }
	c.start()
	c.start() // a second call while the first is in flight
	tick(20)
	c.stop()
	tick(10)
	c.stop()
	tick(30) // idle: not counted
	c.start()
	tick(10)
	c.stop()
	if c.busy != 40*time.Millisecond {
		t.Errorf("busy %s, want 40ms (two overlapping calls count once, idle time not at all)", c.busy)
	}
}

// limitEmbedder records how many calls were in flight at once.
type limitEmbedder struct {
	Embedder
	inFlight, most atomic.Int32
	mu             sync.Mutex
}

func (e *limitEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	n := e.inFlight.Add(1)
	defer e.inFlight.Add(-1)
	e.mu.Lock()
	if n > e.most.Load() {
		e.most.Store(n)
	}
	e.mu.Unlock()
	time.Sleep(5 * time.Millisecond) // long enough for calls to overlap
	return e.Embedder.Embed(ctx, texts)
}

func TestSyncKeepsConcurrencyBatchesInFlight(t *testing.T) {
	store := testStore(t, testDim)
	ctx := context.Background()
	rows := corpusRows(t, nil)[:400]
	embedder := &limitEmbedder{Embedder: &testenv.HashEmbedder{Dim: testDim}}
	var progress []int
	result, err := store.Ingest(ctx, rows, embedder, "hash-64", SyncOptions{BatchSize: 25, Concurrency: 3,
		Progress: func(done, total int) {
			if total != len(rows) {
				t.Errorf("progress total %d, want %d", total, len(rows))
			}
			progress = append(progress, done)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if result.Written != len(rows) || result.Rows != int64(len(rows)) {
		t.Fatalf("wrote %d, stored %d; want %d", result.Written, result.Rows, len(rows))
	}
	if most := embedder.most.Load(); most < 2 || most > 3 {
		t.Errorf("at most %d embedding calls in flight, want 2..3 (concurrency 3)", most)
	}
	if len(progress) != len(rows)/25 || progress[len(progress)-1] != len(rows) {
		t.Errorf("progress %v, want one report per batch ending at %d", progress, len(rows))
	}
	if result.Embedding <= 0 {
		t.Error("no embedding time measured")
	}
}
