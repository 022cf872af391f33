package knowledge

import (
	"context"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Defaults of SyncOptions.
const (
	defaultBatchSize   = 32
	defaultConcurrency = 2
)

// embedClock measures the wall time during which at least one embedding
// call is in flight: with calls overlapping, their durations do not add up.
type embedClock struct {
	now      func() time.Time
	mu       sync.Mutex
	inFlight int
	since    time.Time
	busy     time.Duration
}

func (c *embedClock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight == 0 {
		c.since = c.now()
	}
	c.inFlight++
}

func (c *embedClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight--
	if c.inFlight == 0 {
		c.busy += c.now().Sub(c.since)
	}
}

// writeBatches embeds and upserts rows in batches of opts.BatchSize, with
// up to opts.Concurrency batches in flight, so the embedder is never idle
// while Milvus writes; each batch's vectors are dropped once written. It returns how many rows were written (whole batches
// only: a failed run resumes from the content hashes) and the time spent
// embedding.
func (s *Store) writeBatches(ctx context.Context, collection string, rows []Row, embedder Embedder, opts SyncOptions) (int, time.Duration, error) {
	var (
		clock   = embedClock{now: time.Now}
		mu      sync.Mutex
		written int
	)
	group, ctx := errgroup.WithContext(ctx)
	group.SetLimit(opts.Concurrency)
	for batch := range slices.Chunk(rows, opts.BatchSize) {
		group.Go(func() error {
			clock.start()
			err := s.embedInto(ctx, batch, embedder)
			clock.stop()
			if err != nil {
				return err
			}
			if err := s.Upsert(ctx, collection, batch); err != nil {
				return err
			}
			// Written: the vectors go, so a run holds those of the batches
			// in flight, not of every row (GiBs for a large store).
			for i := range batch {
				batch[i].TextVector, batch[i].TitleVector = nil, nil
			}
			mu.Lock()
			defer mu.Unlock()
			written += len(batch)
			if opts.Progress != nil {
				opts.Progress(written, len(rows))
			}
			return nil
		})
	}
	err := group.Wait()
	return written, clock.busy, err
}
