package knowledge

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
	"weak"

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
	var reports []SyncProgress
	result, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-64", SyncOptions{BatchSize: 25, Concurrency: 3,
		Progress: func(p SyncProgress) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if result.Written != len(rows) || result.Rows != int64(len(rows)) {
		t.Fatalf("wrote %d, stored %d; want %d", result.Written, result.Rows, len(rows))
	}
	if most := embedder.most.Load(); most < 2 || most > 3 {
		t.Errorf("at most %d embedding calls in flight, want 2..3 (concurrency 3)", most)
	}
	// One report per batch written and one when the last row is read,
	// from which on the total of changed rows is known.
	if len(reports) != len(rows)/25+1 || reports[len(reports)-1].Written != len(rows) {
		t.Errorf("progress %+v, want one report per batch and one at the end of the rows, ending at %d written", reports, len(rows))
	}
	complete := slices.IndexFunc(reports, func(p SyncProgress) bool { return p.Complete })
	if complete < 0 || reports[complete].Read != len(rows) || reports[complete].Changed != len(rows) {
		t.Errorf("progress %+v, want a complete report with %d rows read and changed", reports, len(rows))
	}
	for i, p := range reports {
		if p.Written > p.Changed || p.Changed > p.Read || i > 0 && p.Written < reports[i-1].Written {
			t.Errorf("report %d %+v: written ≤ changed ≤ read, and written never goes back, wanted", i, p)
		}
	}
	if result.Embedding <= 0 {
		t.Error("no embedding time measured")
	}
}

// weakEmbedder embeds with a hash embedder and keeps a weak pointer to
// each vector it returns, by call, so a test can see which are freed.
type weakEmbedder struct {
	Embedder
	calls [][]weak.Pointer[float32]
	// onCall runs before each call with the number of calls before it.
	onCall func(calls int)
}

func (e *weakEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.onCall(len(e.calls))
	vectors, err := e.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	var ptrs []weak.Pointer[float32]
	for i, v := range vectors {
		own := make([]float32, len(v)) // an allocation of its own to watch
		copy(own, v)
		vectors[i] = own
		ptrs = append(ptrs, weak.Make(&own[0]))
	}
	e.calls = append(e.calls, ptrs)
	return vectors, nil
}

// A sync drops each batch's vectors once written: 1.4 M rows kept with
// their vectors until the end needed ~4 GB against the ingest pod's
// 1 GiB. By the last batch, every vector of the batches written before
// the previous one has been garbage collected.
func TestSyncFreesEachBatchsVectorsOnceWritten(t *testing.T) {
	store := testStore(t, testDim)
	rows := corpusRows(t, nil)[:200]
	embedder := &weakEmbedder{Embedder: &testenv.HashEmbedder{Dim: testDim}}
	const batches = 10
	var alive int
	embedder.onCall = func(calls int) {
		if calls != batches-1 {
			return
		}
		runtime.GC()
		for _, ptrs := range embedder.calls[:calls-1] {
			for _, p := range ptrs {
				if p.Value() != nil {
					alive++
				}
			}
		}
	}
	if _, err := store.Ingest(context.Background(), RowsOf(rows), embedder, "hash-64", SyncOptions{BatchSize: len(rows) / batches, Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	if len(embedder.calls) != batches {
		t.Fatalf("%d embedding calls, want %d", len(embedder.calls), batches)
	}
	if alive > 0 {
		t.Errorf("%d vectors of written batches still held at the last batch, want none", alive)
	}
}

// A sync reads its rows as a stream and holds only the batches in
// flight, so an ingestion's memory does not grow with the corpus (the
// Argo CD corpus ten times over, held whole, took `ragroute ingest` from
// 114 to 245 MiB). However many rows the stream yields, by its last row
// every row of the batches written before the ones in flight has been
// garbage collected.
func TestSyncHoldsOnlyTheBatchesInFlight(t *testing.T) {
	store := testStore(t, testDim)
	const batchSize, concurrency, n = 10, 2, 400
	template := corpusRows(t, nil)[0]
	var texts []weak.Pointer[byte]
	released, alive := 0, 0
	rows := func(yield func(Row, error) bool) {
		for i := range n {
			if i == n-1 {
				runtime.GC()
				// Batches up to the one being filled, less those that may
				// be in flight or just done, are written and let go.
				released = (i/batchSize - concurrency - 2) * batchSize
				for _, p := range texts[:released] {
					if p.Value() != nil {
						alive++
					}
				}
			}
			r := template
			r.ID, r.ContentHash = fmt.Sprintf("%s-%d", template.ID, i), fmt.Sprintf("hash-%d", i)
			r.Text = fmt.Sprintf("%s (copy %d)", template.Text, i) // an allocation of its own to watch
			texts = append(texts, weak.Make(unsafe.StringData(r.Text)))
			if !yield(r, nil) {
				return
			}
		}
	}
	result, err := store.Ingest(context.Background(), rows, &testenv.HashEmbedder{Dim: testDim}, "hash-64",
		SyncOptions{BatchSize: batchSize, Concurrency: concurrency})
	if err != nil {
		t.Fatal(err)
	}
	if result.Written != n {
		t.Fatalf("wrote %d rows, want %d", result.Written, n)
	}
	if released < n/2 || alive > 0 {
		t.Errorf("%d of the %d rows written before the batches in flight still held at the last row, want none", alive, released)
	}
}
