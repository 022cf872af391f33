package knowledge

import (
	"context"
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

// batchWriter embeds and upserts a sync's batches as they come, with up
// to opts.Concurrency in flight, so the embedder is never idle while
// Milvus writes; a batch is dropped (its rows and vectors with it) once
// written, and write waits while opts.Concurrency batches are in flight,
// so a sync holds those batches, not the rows of every batch.
type batchWriter struct {
	store      *Store
	collection string
	embedder   Embedder
	// sets is the collection's ACL set table, extended before each batch
	// whose rows use a set it lacks.
	sets  aclSets
	opts  SyncOptions
	ctx   context.Context // canceled, with the cause, when a batch fails
	group *errgroup.Group
	clock embedClock

	mu       sync.Mutex
	progress SyncProgress
}

func (s *Store) newBatchWriter(ctx context.Context, collection string, sets aclSets, embedder Embedder, opts SyncOptions) *batchWriter {
	group, ctx := errgroup.WithContext(ctx)
	group.SetLimit(opts.Concurrency)
	return &batchWriter{store: s, collection: collection, embedder: embedder, sets: sets, opts: opts,
		ctx: ctx, group: group, clock: embedClock{now: time.Now}}
}

// read counts a row read from the stream, and whether it is to be written.
func (w *batchWriter) read(changed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.progress.Read++
	if changed {
		w.progress.Changed++
	}
}

// write records batch's ACL sets, then starts embedding and writing it
// once fewer than opts.Concurrency batches are in flight. An error says
// the sync stops (a batch failed, or the table could not be recorded).
func (w *batchWriter) write(batch []Row) error {
	if len(batch) == 0 {
		return nil
	}
	if err := context.Cause(w.ctx); err != nil {
		return err
	}
	// The table first: a row whose set a route cannot resolve yet is
	// found by no one, never by too many.
	if err := w.store.recordACLSets(w.ctx, w.collection, w.sets, batch); err != nil {
		return err
	}
	w.group.Go(func() error {
		w.clock.start()
		err := w.embed(batch)
		w.clock.stop()
		if err != nil {
			return err
		}
		if err := w.store.Upsert(w.ctx, w.collection, batch); err != nil {
			return err
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.progress.Written += len(batch)
		w.report()
		return nil
	})
	return nil
}

// embed embeds batch's texts and titles and, with a unit embedder, its
// units, the two calls at once: the embedder serves several.
func (w *batchWriter) embed(batch []Row) error {
	if w.opts.UnitEmbedder == nil {
		return w.store.embedInto(w.ctx, batch, w.embedder)
	}
	var group errgroup.Group
	group.Go(func() error { return w.store.embedInto(w.ctx, batch, w.embedder) })
	group.Go(func() error { return w.store.embedUnits(w.ctx, batch, w.opts.UnitEmbedder) })
	return group.Wait()
}

// complete says every row is read: Changed is final.
func (w *batchWriter) complete() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.progress.Complete = true
	w.report()
}

// report tells opts.Progress; w.mu is held.
func (w *batchWriter) report() {
	if w.opts.Progress != nil {
		w.opts.Progress(w.progress)
	}
}

// wait waits for the batches in flight and returns how many rows were
// written (whole batches only: a failed run resumes from the content
// hashes) and the time spent embedding.
func (w *batchWriter) wait() (int, time.Duration, error) {
	err := w.group.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.progress.Written, w.clock.busy, err
}
