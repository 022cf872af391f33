// Package ingestion is one ingestion run: open the sources, then read
// and chunk them one document at a time, keep each chunk's embedded input
// within the embedder's limit (cut and counted when over), embed what
// changed in batches as they come and bring the Milvus collection to
// exactly those chunks (a new generation behind the alias when the
// embedder changed), then record the embedder's background similarity
// and the count of cut chunks on it.
// `ragroute ingest` wires its clients and runs it; the KnowledgeStore
// controller renders its config. It imports nothing from Kubernetes.
package ingestion

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/sources"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// Summary is what a run did, for the exit message and the store's status.
type Summary struct {
	Files       int
	Chunks      int
	Rejected    []string // documents refused (e.g. invalid front matter), with the reason
	Result      knowledge.IngestResult
	Duration    time.Duration
	Fingerprint string

	// Truncated counts the chunks whose embedded text (or title path) was
	// cut to fit the embedder's input (inputLimit); their stored text is
	// whole.
	Truncated int
}

// Progress hears how far a run is. Documents are read, chunked and
// written as a stream, one batch after another: how many chunks the
// sources hold, and how many of them changed, is known only once the
// last document is read. Read comes from the goroutine reading the
// sources while batches are still written: it may come at the same time
// as a Synced.
type Progress interface {
	// Read: every source is read, files documents in chunks chunks
	// (batches may still be in flight).
	Read(files, chunks int)
	// Synced hears the sync after each batch written, and once when the
	// last chunk is read (Complete).
	Synced(knowledge.SyncProgress)
}

// Target is where a run writes: the store behind the config's alias and
// the store's embedder, built by the caller from the same config.
type Target struct {
	Store *knowledge.Store
	// Embedder embeds chunk texts and titles (behind the document prefix).
	Embedder knowledge.Embedder
	// QueryEmbedder, if set, embeds as routes embed questions (behind the
	// query prefix): the run then measures the generation's background
	// similarity and records it on the collection for routes' relative
	// floors, and embeds every chunk's units as the routes' grounding
	// check would, stored with the chunk (knowledge.SyncOptions.UnitEmbedder).
	QueryEmbedder knowledge.Embedder
	// BatchTimeout bounds each embedding call by its size (zero: 30s + 5s
	// per input), under Embedder's own request timeout. A call that fails
	// or times out is split in halves down to single inputs; one input
	// that fails alone fails the run, naming its document.
	BatchTimeout BatchTimeout
	// DocumentTimeout bounds chunking one document (zero:
	// DefaultDocumentTimeout); a document that takes longer is refused.
	DocumentTimeout time.Duration
}

// DefaultDocumentTimeout bounds chunking one document when the Target
// names no bound. Pages of the largest size (prose, accented text,
// tables, lists) took at most 3 s on a shared 2-core machine: the margin
// is for throttled pods, the bound for pages no chunker handles in time
// (8 MiB of Japanese without a space or a blank line took minutes).
const DefaultDocumentTimeout = 30 * time.Second

// Run ingests the configured sources into target. Every source is
// opened first (a Git source cloned): a source that cannot be read at
// all (a link at its path, a failed clone) fails the run before anything
// is written. Then documents are read one at a time, chunked, compared
// with the stored content hashes, and the changed chunks embedded and
// written in batches as they come, so the run's memory does not grow
// with the sources. A document that is refused (a front matter that
// cannot be trusted, a link out of its source or to nothing, a file over
// the size limit, one that takes longer than Target.DocumentTimeout to
// chunk) is skipped and reported in Summary.Rejected;
// everything else is still ingested and removed documents deleted (after
// the writes), and the count is recorded on the generation, where the
// store's status shows it. Sources that yield no document at all stop
// the run before anything is deleted.
func Run(ctx context.Context, cfg podconfig.IngestConfig, target Target, progress Progress) (Summary, error) {
	start := time.Now()
	summary := Summary{Fingerprint: cfg.Embedding.Fingerprint()}
	limit, err := newInputLimit(cfg.Embedding)
	if err != nil {
		return summary, err
	}
	rows, closeSources, err := streamRows(ctx, cfg, limit, target.DocumentTimeout, &summary, progress)
	if err != nil {
		return summary, err
	}
	defer closeSources()

	embedder := newSplitting(limit.embedder(target.Embedder), target.BatchTimeout)
	var units knowledge.Embedder
	if target.QueryEmbedder != nil {
		units = newSplitting(target.QueryEmbedder, target.BatchTimeout)
	}
	summary.Result, err = target.Store.Ingest(ctx, rows, embedder, summary.Fingerprint, knowledge.SyncOptions{
		BatchSize: cfg.BatchSize, Concurrency: cfg.Concurrency, Progress: progress.Synced,
		Counts: func() knowledge.Counts {
			return knowledge.Counts{Truncated: int64(summary.Truncated), Refused: int64(len(summary.Rejected))}
		},
		QueryEmbedder: target.QueryEmbedder, UnitEmbedder: units,
		Embedder: &knowledge.EmbedderInfo{Model: cfg.Embedding.Model, Dimensions: int(cfg.Embedding.Dimensions),
			QueryPrefix: cfg.Embedding.QueryPrefix, DocumentPrefix: cfg.Embedding.DocumentPrefix},
	})
	summary.Duration = time.Since(start)
	if err != nil {
		return summary, fmt.Errorf("ingest into %s: %w", cfg.Milvus.Collection, err)
	}
	return summary, nil
}

// errStopped ends a source's walk when the stream's reader stops.
var errStopped = errors.New("the reader stopped")

// streamRows opens every source (a failed open or clone is returned
// here, before anything is written) and returns the stream of their
// rows, which counts into summary (files, chunks, rows limit cuts,
// documents refused) as it goes and tells progress once the last
// document is read, and a func that closes the sources. Each document is
// chunked within docTimeout (zero: DefaultDocumentTimeout). Sources are
// prefixed to document paths, so two sources may hold a file of the same
// name. A stream that ends with no document ingested yields an error:
// every document refused (a mount whose links all lead nowhere) empties
// the store no more than no document does.
func streamRows(ctx context.Context, cfg podconfig.IngestConfig, limit inputLimit, docTimeout time.Duration, summary *Summary, progress Progress) (iter.Seq2[knowledge.Row, error], func(), error) {
	opts := ingest.Options{
		MaxTokens: cfg.Chunking.MaxTokens, OverlapTokens: cfg.Chunking.OverlapTokens,
		MergeBelowTokens: cfg.Chunking.MergeBelowTokens, FrontMatterKey: cfg.Chunking.FrontMatterKey,
		Tokens: chunkTokens(cfg.Embedding.Tokenizer),
	}
	if opts.FrontMatterKey == "" {
		opts.FrontMatterKey = "acl"
	}
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	docTimeout = cmp.Or(docTimeout, DefaultDocumentTimeout)
	opened, err := openSources(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	closeAll := func() {
		for _, src := range opened {
			src.close()
		}
	}
	rows := func(yield func(knowledge.Row, error) bool) {
		for _, src := range opened {
			err := src.markdown.Walk(func(doc ingest.Document) error {
				doc.Source = path.Join(src.name, doc.Source)
				docRows, err := documentRows(ctx, doc, opts, docTimeout)
				if ctx.Err() != nil {
					return fmt.Errorf("%s: %w", doc.Source, ctx.Err())
				}
				if err != nil {
					summary.Rejected = append(summary.Rejected, err.Error())
					return nil
				}
				summary.Files++
				summary.Chunks += len(docRows)
				for _, row := range docRows {
					if limit.cuts(row) {
						summary.Truncated++
					}
					if !yield(row, nil) {
						return errStopped
					}
				}
				return nil
			}, func(refused error) {
				summary.Rejected = append(summary.Rejected, fmt.Sprintf("source %s: %v", src.name, refused))
			})
			if errors.Is(err, errStopped) {
				return
			}
			if err != nil {
				yield(knowledge.Row{}, fmt.Errorf("source %s: %w", src.name, err))
				return
			}
		}
		if summary.Files == 0 {
			yield(knowledge.Row{}, fmt.Errorf("the sources hold no Markdown documents that could be ingested (%d refused); refusing to empty the store", len(summary.Rejected)))
			return
		}
		progress.Read(summary.Files, summary.Chunks)
	}
	return rows, closeAll, nil
}

// documentRows are doc's chunks as rows, or an error naming it when it
// takes longer than timeout to chunk, or when a row breaks the store's
// schema (65 image URLs in one chunk, a path over 2,048 bytes, a byte
// that is not UTF-8 in its text or name): found before embedding, it
// refuses this document alone. A name that is not UTF-8 is quoted, so
// the message says which bytes.
func documentRows(ctx context.Context, doc ingest.Document, opts ingest.Options, timeout time.Duration) ([]knowledge.Row, error) {
	docCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	chunks, err := ingest.ChunksContext(docCtx, doc, opts)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, fmt.Errorf("%s: took longer than %s to read: refused", documentName(doc.Source), timeout)
	}
	if err != nil {
		return nil, err
	}
	rows := make([]knowledge.Row, len(chunks))
	for i, ch := range chunks {
		rows[i] = RowFromChunk(ch)
		if err := rows[i].CheckFields(); err != nil {
			return nil, fmt.Errorf("%s: refused: %w", documentName(doc.Source), err)
		}
	}
	return rows, nil
}

// documentName is a document's source path as messages name it: quoted
// when it is not UTF-8, so the message says which bytes.
func documentName(source string) string {
	if !utf8.ValidString(source) {
		return strconv.Quote(source)
	}
	return source
}

// openSource is a source opened for a run: a folder within its mount,
// or a folder of a repository cloned into a scratch folder of its own.
type openSource struct {
	name     string
	markdown *sources.Markdown
	clone    string // the scratch folder, removed on close; "" for a mount
}

func (o openSource) close() {
	o.markdown.Close()
	if o.clone != "" {
		_ = os.RemoveAll(o.clone)
	}
}

// openSources opens every source of cfg, or none: on an error those
// already opened are closed (their clones removed). Every clone stays
// on disk until the run ends.
func openSources(ctx context.Context, cfg podconfig.IngestConfig) ([]openSource, error) {
	var opened []openSource
	for _, src := range cfg.Sources {
		principals := src.Principals
		if len(principals) == 0 {
			principals = cfg.DefaultPrincipals
		}
		o, err := openOne(ctx, src, principals)
		if err != nil {
			for _, o := range opened {
				o.close()
			}
			return nil, fmt.Errorf("source %s: %w", src.Name, err)
		}
		opened = append(opened, o)
	}
	return opened, nil
}

// openOne opens one source's Markdown, cloning a Git source first.
func openOne(ctx context.Context, src podconfig.Source, principals []string) (openSource, error) {
	o := openSource{name: src.Name}
	var err error
	if src.Git == nil {
		root := cmp.Or(src.Root, src.Path)
		dir, err := filepath.Rel(root, src.Path)
		if err != nil {
			return o, fmt.Errorf("path %s within %s: %w", src.Path, root, err)
		}
		o.markdown, err = sources.OpenMarkdown(root, filepath.ToSlash(dir), principals)
		return o, err
	}
	if o.clone, err = os.MkdirTemp("", "ragroute-git-"); err != nil {
		return o, err
	}
	if err = sources.Clone(ctx, *src.Git, o.clone); err == nil {
		o.markdown, err = sources.OpenMarkdown(o.clone, src.Git.Path, principals)
	}
	if err != nil {
		_ = os.RemoveAll(o.clone)
		return o, err
	}
	return o, nil
}

// chunkTokens counts chunk sizes in the tokens of the store's embedder.
func chunkTokens(t podconfig.Tokenizer) tokenize.SpaceAdditive {
	chunks, _ := tokenize.ForEmbedder(t)
	return chunks
}
