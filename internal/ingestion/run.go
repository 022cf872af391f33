// Package ingestion is one ingestion run: read the sources, chunk them,
// keep each chunk's embedded input within the embedder's limit (cut and
// counted when over), embed what changed and bring the Milvus collection
// to exactly those chunks (a new generation behind the alias when the
// embedder changed), then record the embedder's background similarity
// and the count of cut chunks on it.
// `ragroute ingest` wires its clients and runs it; the KnowledgeStore
// controller renders its config. It imports nothing from Kubernetes.
package ingestion

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

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

// Progress hears how far a run is.
type Progress interface {
	Read(files, chunks int)
	Embedded(done, total int)
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
	// floors.
	QueryEmbedder knowledge.Embedder
	// BatchTimeout bounds each embedding call by its size (zero: 30s + 5s
	// per input), under Embedder's own request timeout. A call that fails
	// or times out is split in halves down to single inputs; one input
	// that fails alone fails the run, naming its document.
	BatchTimeout BatchTimeout
}

// Run ingests the configured sources into target. A document that is
// refused (a front matter that cannot be trusted, a link out of its
// source or to nothing, a file over the size limit) is skipped and
// reported in Summary.Rejected; everything else is still ingested and
// removed documents deleted, and the count is recorded on the generation,
// where the store's status shows it. A source that cannot be read at all (a link at its path, a
// failed clone) fails the run before anything is written.
func Run(ctx context.Context, cfg podconfig.IngestConfig, target Target, progress Progress) (Summary, error) {
	start := time.Now()
	summary := Summary{Fingerprint: cfg.Embedding.Fingerprint()}
	limit, err := newInputLimit(cfg.Embedding)
	if err != nil {
		return summary, err
	}
	rows, err := readRows(ctx, cfg, limit, &summary)
	if err != nil {
		return summary, err
	}
	progress.Read(summary.Files, summary.Chunks)

	embedder := newSplitting(limit.embedder(target.Embedder), target.BatchTimeout, rows)
	summary.Result, err = target.Store.Ingest(ctx, rows, embedder, summary.Fingerprint, knowledge.SyncOptions{
		BatchSize: cfg.BatchSize, Concurrency: cfg.Concurrency, Progress: progress.Embedded,
		Truncated:     int64(summary.Truncated),
		Refused:       int64(len(summary.Rejected)),
		QueryEmbedder: target.QueryEmbedder,
		Embedder: &knowledge.EmbedderInfo{Model: cfg.Embedding.Model, Dimensions: int(cfg.Embedding.Dimensions),
			QueryPrefix: cfg.Embedding.QueryPrefix, DocumentPrefix: cfg.Embedding.DocumentPrefix},
	})
	summary.Duration = time.Since(start)
	if err != nil {
		return summary, fmt.Errorf("ingest into %s: %w", cfg.Milvus.Collection, err)
	}
	return summary, nil
}

// readRows reads and chunks every source, counting the rows limit cuts.
// Sources are prefixed to document paths, so two sources may hold a file
// of the same name.
func readRows(ctx context.Context, cfg podconfig.IngestConfig, limit inputLimit, summary *Summary) ([]knowledge.Row, error) {
	opts := ingest.Options{
		MaxTokens: cfg.Chunking.MaxTokens, OverlapTokens: cfg.Chunking.OverlapTokens,
		MergeBelowTokens: cfg.Chunking.MergeBelowTokens, FrontMatterKey: cfg.Chunking.FrontMatterKey,
		Tokens: tokenize.NewBERTUncased(),
	}
	if opts.FrontMatterKey == "" {
		opts.FrontMatterKey = "acl"
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var rows []knowledge.Row
	for _, src := range cfg.Sources {
		principals := src.Principals
		if len(principals) == 0 {
			principals = cfg.DefaultPrincipals
		}
		read, err := readSource(ctx, src, principals)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", src.Name, err)
		}
		for _, refused := range read.Refused {
			summary.Rejected = append(summary.Rejected, fmt.Sprintf("source %s: %v", src.Name, refused))
		}
		for _, doc := range read.Documents {
			doc.Source = path.Join(src.Name, doc.Source)
			docRows, err := documentRows(doc, opts)
			if err != nil {
				summary.Rejected = append(summary.Rejected, err.Error())
				continue
			}
			summary.Files++
			summary.Chunks += len(docRows)
			for _, row := range docRows {
				if limit.cuts(row) {
					summary.Truncated++
				}
			}
			rows = append(rows, docRows...)
		}
	}
	if summary.Files == 0 {
		// Every document refused (a mount whose links all lead nowhere)
		// empties the store no more than no document does.
		return nil, fmt.Errorf("the sources hold no Markdown documents that could be ingested (%d refused); refusing to empty the store", len(summary.Rejected))
	}
	return rows, nil
}

// documentRows are doc's chunks as rows, or an error naming it when a
// row breaks the store's schema (65 image URLs in one chunk, a path over
// 2,048 bytes): found before embedding, it refuses this document alone.
func documentRows(doc ingest.Document, opts ingest.Options) ([]knowledge.Row, error) {
	chunks, err := ingest.Chunks(doc, opts)
	if err != nil {
		return nil, err
	}
	rows := make([]knowledge.Row, len(chunks))
	for i, ch := range chunks {
		rows[i] = RowFromChunk(ch)
		if err := rows[i].CheckFields(); err != nil {
			return nil, fmt.Errorf("%s: refused: %w", doc.Source, err)
		}
	}
	return rows, nil
}

// readSource reads one source's Markdown: a folder within its mount, or
// a folder of a repository cloned into a scratch folder of its own,
// removed after the read.
func readSource(ctx context.Context, src podconfig.Source, principals []string) (sources.Read, error) {
	if src.Git == nil {
		root := cmp.Or(src.Root, src.Path)
		dir, err := filepath.Rel(root, src.Path)
		if err != nil {
			return sources.Read{}, fmt.Errorf("path %s within %s: %w", src.Path, root, err)
		}
		return sources.ReadMarkdown(root, filepath.ToSlash(dir), principals)
	}
	clone, err := os.MkdirTemp("", "ragroute-git-")
	if err != nil {
		return sources.Read{}, err
	}
	defer os.RemoveAll(clone)
	if err := sources.Clone(ctx, *src.Git, clone); err != nil {
		return sources.Read{}, err
	}
	return sources.ReadMarkdown(clone, src.Git.Path, principals)
}
