package knowledge

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// Embedder turns texts into vectors, in order: the KnowledgeStore's
// embedding model, the same one routes embed queries with.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// InputError is an Embedder's error for one input it could not embed
// (alone, after splitting a failed call): Index is its place in the
// call's texts. A sync names the input's document.
type InputError struct {
	Index int
	Err   error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// SyncOptions tune a sync.
type SyncOptions struct {
	// BatchSize is how many chunks are embedded and written per call.
	BatchSize int
	// Concurrency is how many batches are in flight at once.
	Concurrency int
	// Progress, if set, hears how far the sync is: after each batch
	// written, and once when the last row is read. Calls are serialized.
	Progress func(SyncProgress)
	// Counts, if set, is asked once every row is read: Ingest records
	// them on the generation (when they differ from what is recorded),
	// before the alias moves; nil records zeros. Sync ignores it.
	Counts func() Counts
	// QueryEmbedder, if set, embeds as routes embed questions (the query
	// prefix; the embedder passed to Ingest embeds documents). Ingest then
	// measures the generation's background similarity and records it
	// before the alias moves: after a run that built the generation or
	// changed rows, and whenever none is recorded yet. Sync ignores it.
	QueryEmbedder Embedder
	// Embedder, if set, names the embedder whose fingerprint Ingest is
	// given: Ingest records it on the generation before the alias moves
	// (and on the generation already serving when it lacks it), so that
	// routes and the operator can say which embedder built the index.
	// Sync ignores it.
	Embedder *EmbedderInfo
	// UnitEmbedder, if set, embeds each written row's units as the
	// grounding check embeds them (the query prefix), stored with the row
	// (units.go); Ingest then records on the generation that it holds
	// them. Nil stores none: routes embed fragments' units per turn.
	UnitEmbedder Embedder
}

// Counts are what an ingestion counted of its sources as it read them.
type Counts struct {
	// Truncated is how many of the rows had an embedded input cut to the
	// embedder's limit.
	Truncated int64
	// Refused is how many documents of the sources were refused.
	Refused int64
}

// SyncResult counts what a sync did.
type SyncResult struct {
	Written   int // new or changed chunks embedded and upserted
	Deleted   int // stored chunks no source produces any more
	Unchanged int // chunks whose content hash matched: not even embedded
	// Embedding is the wall time during which an embedding call was in
	// flight: a run bound by the embedder spends nearly all its time here.
	Embedding time.Duration
}

// SyncProgress is how far a sync is. Rows are read as a stream, so how
// many will be written is known only once the last is read (Complete).
type SyncProgress struct {
	Read     int  // rows read so far
	Changed  int  // of them, new or changed: to be written
	Written  int  // of those, embedded and written
	Complete bool // every row is read: Changed is final
}

// RowsOf streams rows held in a slice, for Sync and Ingest.
func RowsOf(rows []Row) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Sync makes collection hold exactly the rows the stream yields: chunks
// that are new or whose content hash changed are embedded and upserted in
// batches as they come (a sync holds the batches in flight, not the
// stream), chunks no longer produced are deleted (after the writes, so a
// search never misses content mid-sync), and unchanged chunks are not
// touched. A second run over the same rows writes nothing. Across the
// stream it keeps the stored content hashes and a compact set of the ids
// read (two rows with one id are an error naming it). An error the
// stream yields ends the sync after the batches in flight, before
// anything is deleted.
func (s *Store) Sync(ctx context.Context, collection string, rows iter.Seq2[Row, error], embedder Embedder, opts SyncOptions) (SyncResult, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency
	}
	stored, err := s.ContentHashes(ctx, collection)
	if err != nil {
		return SyncResult{}, err
	}
	sets, err := s.aclSetsOf(ctx, collection)
	if err != nil {
		return SyncResult{}, err
	}
	var result SyncResult
	w := s.newBatchWriter(ctx, collection, sets, embedder, opts)
	readErr := func() error {
		seen := idSet{}
		batch := make([]Row, 0, opts.BatchSize)
		for r, err := range rows {
			if err != nil {
				return err
			}
			if !seen.add(r.ID) {
				return fmt.Errorf("two chunks share id %s (%s %v)", r.ID, r.Source, r.HeadingPath)
			}
			hash, had := stored[r.ID]
			delete(stored, r.ID) // what is left at the end is stale
			changed := !had || hash != r.ContentHash
			w.read(changed)
			if !changed {
				result.Unchanged++
				continue
			}
			if batch = append(batch, r); len(batch) == opts.BatchSize {
				if err := w.write(batch); err != nil {
					return err
				}
				batch = make([]Row, 0, opts.BatchSize)
			}
		}
		if err := w.write(batch); err != nil {
			return err
		}
		w.complete()
		return nil
	}()
	var writeErr error
	result.Written, result.Embedding, writeErr = w.wait()
	if err := cmp.Or(writeErr, readErr); err != nil {
		return result, err
	}

	stale := slices.Sorted(maps.Keys(stored))
	for batch := range slices.Chunk(stale, 1000) {
		if err := s.Delete(ctx, collection, batch); err != nil {
			return result, err
		}
		result.Deleted += len(batch)
	}
	if result.Written+result.Deleted > 0 {
		if err := s.flush(ctx, collection); err != nil {
			return result, err
		}
	}
	return result, nil
}

// idSet is a set of ids kept as digests: 16 bytes an id however long it
// is, and none of the id strings (nor the rows they belong to) kept alive.
type idSet map[[16]byte]struct{}

// add adds id and reports whether it was new.
func (s idSet) add(id string) bool {
	sum := sha256.Sum256([]byte(id))
	key := [16]byte(sum[:16])
	if _, ok := s[key]; ok {
		return false
	}
	s[key] = struct{}{}
	return true
}

// flush seals what a sync wrote, so searches read indexed segments rather
// than scanning the growing ones (on Milvus Lite a search of unsealed rows
// is several times slower; on Milvus it also starts the index build).
func (s *Store) flush(ctx context.Context, collection string) error {
	task, err := s.client.Flush(ctx, milvusclient.NewFlushOption(collection))
	if err == nil {
		err = task.Await(ctx)
	}
	if err != nil {
		return fmt.Errorf("flush %s: %w", collection, err)
	}
	return nil
}

// embedInto embeds each row's text and title path in one call, each
// title path once: the parts of a split section share theirs (on the
// Russian Kubernetes docs 1,562 chunks have 712), and an embedder's time
// is ingestion's.
func (s *Store) embedInto(ctx context.Context, rows []Row, embedder Embedder) error {
	texts := make([]string, 0, 2*len(rows))
	rowOf := make([]int, 0, 2*len(rows)) // the row each text is first of
	textAt, titleAt := make([]int, len(rows)), make([]int, len(rows))
	seen := map[string]int{}
	for i, r := range rows {
		textAt[i] = len(texts)
		texts, rowOf = append(texts, r.EmbeddedText()), append(rowOf, i)
		title := r.TitlePath()
		at, ok := seen[title]
		if !ok {
			at, seen[title] = len(texts), len(texts)
			texts, rowOf = append(texts, title), append(rowOf, i)
		}
		titleAt[i] = at
	}
	vectors, err := embedder.Embed(ctx, texts)
	if err != nil {
		if input, ok := errors.AsType[*InputError](err); ok && input.Index >= 0 && input.Index < len(texts) {
			err = fmt.Errorf("document %s: %w", rows[rowOf[input.Index]].Source, err)
		}
		return fmt.Errorf("embed %d chunks: %w", len(rows), err)
	}
	if len(vectors) != len(texts) {
		return fmt.Errorf("embedder returned %d vectors for %d texts", len(vectors), len(texts))
	}
	for i := range rows {
		rows[i].TextVector, rows[i].TitleVector = vectors[textAt[i]], vectors[titleAt[i]]
	}
	return nil
}

// IngestResult says what an ingestion did.
type IngestResult struct {
	SyncResult
	Generation Generation
	// NewGeneration is true when the embedder, the schema or the analyzer
	// changed (or the store was empty) and a new collection was built and
	// swapped in.
	NewGeneration bool
	Rows          int64
	// Background is the background similarity this run measured and
	// recorded; nil when it measured none (no QueryEmbedder, nothing
	// changed, or fewer than two documents).
	Background *Background
}

// Ingest brings the store to the rows the stream yields (Sync). With the
// same embedder, schema and keyword analyzer as the active generation it
// syncs that generation in place; with another (or no generation yet) it
// builds the next generation from scratch, then
// moves the alias to it in one step and drops the old one, so routes never
// mix vector spaces or see a half-built index. A failed build leaves the
// alias where it was; the next run resumes the half-built generation.
func (s *Store) Ingest(ctx context.Context, rows iter.Seq2[Row, error], embedder Embedder, fingerprint string, opts SyncOptions) (IngestResult, error) {
	active, ok, err := s.Active(ctx)
	if err != nil {
		return IngestResult{}, err
	}
	if ok {
		// Before anything is written: another store's collection is refused.
		if err := s.adopt(ctx, active); err != nil {
			return IngestResult{}, err
		}
	}
	target := active
	// A new embedder means a new vector space; a new schema, new fields; a
	// new analyzer, other keyword-search terms; units to store where the
	// rows hold none, every row written again.
	fresh := !ok || active.Embedder != fingerprint || active.Schema != schemaVersion || active.Analyzer != s.analyzer.ID() ||
		(opts.UnitEmbedder != nil && active.Units != UnitsVersion)
	if fresh {
		if target, err = s.CreateGeneration(ctx, active.Number+1, fingerprint); err != nil {
			return IngestResult{}, err
		}
	} else if err := s.verify(ctx, active.Collection); err != nil {
		return IngestResult{}, err
	}
	synced, err := s.Sync(ctx, target.Collection, rows, embedder, opts)
	if err != nil {
		return IngestResult{SyncResult: synced, Generation: target}, err
	}
	var background *Background
	if opts.QueryEmbedder != nil && (fresh || synced.Written+synced.Deleted > 0 || target.Background == nil) {
		// Before the alias moves: a route never serves a new generation
		// without its background.
		if background, err = s.updateBackground(ctx, target.Collection, opts.QueryEmbedder); err != nil {
			return IngestResult{SyncResult: synced, Generation: target}, err
		}
		if background != nil {
			target.Background = background
		}
	}
	var counts Counts
	if opts.Counts != nil {
		counts = opts.Counts()
	}
	for _, c := range []struct {
		property string
		recorded **int64
		n        int64
	}{{truncatedProperty, &target.Truncated, counts.Truncated}, {refusedProperty, &target.Refused, counts.Refused}} {
		if *c.recorded == nil || **c.recorded != c.n {
			if err := s.recordCount(ctx, target.Collection, c.property, c.n); err != nil {
				return IngestResult{SyncResult: synced, Generation: target}, err
			}
			*c.recorded = &c.n
		}
	}
	if fresh || synced.Written+synced.Deleted > 0 || target.Flagged == nil {
		// Before the alias moves, as the background: the count always
		// describes the generation that serves.
		flagged, err := s.recordFlagged(ctx, target.Collection)
		if err != nil {
			return IngestResult{SyncResult: synced, Generation: target}, err
		}
		target.Flagged = &flagged
	}
	if info := opts.Embedder; info != nil && (target.EmbedderInfo == nil || *target.EmbedderInfo != *info) {
		// Before the alias moves: a route never serves a generation that
		// cannot say which embedder built it.
		if err := s.recordEmbedderInfo(ctx, target.Collection, *info); err != nil {
			return IngestResult{SyncResult: synced, Generation: target}, err
		}
		target.EmbedderInfo = info
	}
	if opts.UnitEmbedder != nil && target.Units != UnitsVersion {
		// Before the alias moves, as the embedder's name.
		if err := s.recordUnits(ctx, target.Collection); err != nil {
			return IngestResult{SyncResult: synced, Generation: target}, err
		}
		target.Units = UnitsVersion
	}
	if fresh {
		if err := s.Activate(ctx, target); err != nil {
			return IngestResult{SyncResult: synced, Generation: target}, err
		}
	}
	count, err := s.Count(ctx, target.Collection)
	if err != nil {
		return IngestResult{}, err
	}
	return IngestResult{SyncResult: synced, Generation: target, NewGeneration: fresh, Rows: count, Background: background}, nil
}

// updateBackground measures collection's background similarity and records
// it; nil (and no error) when the collection has fewer than two documents.
func (s *Store) updateBackground(ctx context.Context, collection string, queryEmbedder Embedder) (*Background, error) {
	b, err := s.measureBackground(ctx, collection, queryEmbedder)
	if errors.Is(err, ErrNoBackground) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := s.recordBackground(ctx, collection, b); err != nil {
		return nil, err
	}
	return &b, nil
}
