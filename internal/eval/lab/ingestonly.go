package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/ingestion"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// IngestionRow is one system's ingestion of the corpus: every row of
// `make compare` on a corpus without questions, and a peer configuration
// whose ingestion failed on one with them.
type IngestionRow struct {
	Config            string  `json:"config"`
	Chunks            int     `json:"chunks"`
	LargestChunkBytes int     `json:"largest_chunk_bytes"`
	Seconds           float64 `json:"seconds"`
	// Failure says why the ingestion failed; empty when it did not.
	Failure string `json:"failure,omitempty"`
}

// ingestOnly measures what can be measured on a corpus without a question
// set: the heading-tree chunks, chunked, embedded (no vector cache: every
// text, as a peer embeds them) and written to a fresh collection, beside
// the peers' ingestion.
func ingestOnly(ctx context.Context, opts Options, peers []peer, began time.Time) (Report, error) {
	source := filepath.Base(filepath.Clean(opts.Corpus))
	docs, err := eval.ReadCorpus(opts.Corpus, source)
	if err != nil {
		return Report{}, err
	}
	start := time.Now()
	row := IngestionRow{Config: RouteDefault}
	var rows []knowledge.Row
	var failed []string
	for _, d := range docs {
		chunks, err := ingest.Chunks(d, opts.chunking())
		if err != nil {
			// A refused document is ingestion's too: the rest goes in.
			failed = append(failed, err.Error())
			continue
		}
		for _, ch := range chunks {
			row.LargestChunkBytes = max(row.LargestChunkBytes, len(ch.Text))
			rows = append(rows, ingestion.RowFromChunk(ch))
		}
	}
	row.Chunks = len(rows)
	logf(opts.Progress, "corpus: %d documents → %d heading-tree chunks (%d refused); no questions: ingestion only\n", len(docs), len(rows), len(failed))
	store := opts.Client("eval_ingest_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10))
	if _, err := store.Ingest(ctx, knowledge.RowsOf(rows), opts.Embedder, opts.Fingerprint, knowledge.SyncOptions{BatchSize: 128, Concurrency: 4}); err != nil {
		row.Failure = err.Error()
	}
	row.Seconds = time.Since(start).Seconds()
	if len(failed) > 0 {
		row.Failure = strings.TrimPrefix(row.Failure+"; ", "; ") + fmt.Sprintf("%d documents refused: %s", len(failed), strings.Join(failed, "; "))
	}
	report := Report{Route: routeName(opts.Route), Deviations: opts.Deviations, Configs: map[string]eval.Metrics{},
		Ingestion: []IngestionRow{row}}
	for _, p := range peers {
		report.Ingestion = append(report.Ingestion, p.ingestion)
	}
	report.Seconds = time.Since(began).Seconds()
	return report, nil
}

// ingestionTable renders ingestion rows; "" when there are none.
func ingestionTable(rows []IngestionRow) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| config | chunks | largest chunk | ingestion | failure |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		failure := r.Failure
		if failure == "" {
			failure = "none"
		}
		fmt.Fprintf(&b, "| %s | %d | %d bytes | %.1f s | %s |\n", r.Config, r.Chunks, r.LargestChunkBytes, r.Seconds, failure)
	}
	return b.String()
}
