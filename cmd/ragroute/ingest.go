package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/ingestion"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// runIngest runs one ingestion: sources → chunks → embeddings → Milvus.
func runIngest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ragroute ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "/etc/ragroute/"+podconfig.IngestFileName, "ingest config rendered by the operator")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := podconfig.LoadIngest(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute ingest:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	store, closeStore, err := assembly.OpenStore(ctx, cfg.Milvus, cfg.Embedding, cfg.Lexical, os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute ingest:", err)
		return 1
	}
	defer closeStore()
	progress := newProgress(stdout, isTerminal(stdout))
	summary, err := ingestion.Run(ctx, cfg, ingestion.Target{Store: store,
		Embedder:      assembly.DocumentEmbedder(cfg.Embedding, os.Getenv, assembly.BatchEmbedTimeout),
		QueryEmbedder: assembly.QueryEmbedder(cfg.Embedding, os.Getenv, assembly.BatchEmbedTimeout)}, progress)
	progress.done()
	for _, rejected := range summary.Rejected {
		fmt.Fprintln(stderr, "ragroute ingest: refused:", rejected)
	}
	if n := len(summary.Rejected); n > 0 && err == nil {
		fmt.Fprintf(stderr, "ragroute ingest: %d documents refused and not ingested; the rest is ingested and the count recorded on the generation (the store's status.refusedDocuments)\n", n)
	}
	r := summary.Result
	fmt.Fprintf(stdout, "ingest %s: %d files, %d chunks (%d embedded cut to the embedder's input); %d written, %d deleted, %d unchanged; generation %d (%s), %d rows; embedder %s; keyword analyzer %s; %s (embedding %s, %.0f%%)\n",
		cfg.Store, summary.Files, summary.Chunks, summary.Truncated, r.Written, r.Deleted, r.Unchanged, r.Generation.Number,
		r.Generation.Collection, r.Rows, summary.Fingerprint, r.Generation.Analyzer, summary.Duration.Round(time.Millisecond),
		r.Embedding.Round(time.Millisecond), 100*r.Embedding.Seconds()/max(summary.Duration.Seconds(), 1e-9))
	if b := r.Background; b != nil {
		fmt.Fprintf(stdout, "background similarity: mean %.4f, sd %.4f, p50 %.4f, p90 %.4f, p99 %.4f (%d pairs)\n",
			b.Mean, b.StdDev, b.P50, b.P90, b.P99, b.Samples)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ragroute ingest:", err)
		return 1
	}
	return 0
}

// progress prints how far a run is: a redrawn line on a terminal, a
// line every few seconds in a log. Documents are read and written as a
// stream, so until the last is read the line counts what was read so
// far; from then on it shows the total of changed chunks and an ETA.
type progress struct {
	mu       sync.Mutex // Read and Synced may come at once
	out      io.Writer
	terminal bool
	start    time.Time
	last     time.Time
	// drawn: a redrawn line is on the terminal, to end before another line.
	drawn bool
}

func newProgress(out io.Writer, terminal bool) *progress {
	return &progress{out: out, terminal: terminal, start: time.Now()}
}

func (p *progress) Read(files, chunks int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.print(fmt.Sprintf("read %d files, %d chunks", files, chunks), true)
}

func (p *progress) Synced(s knowledge.SyncProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.Complete && s.Changed == 0 {
		return // nothing to embed: the summary says so
	}
	now := time.Now()
	final := s.Complete && s.Written == s.Changed
	if !final && now.Sub(p.last) < p.interval() {
		return
	}
	p.last = now
	rate := float64(s.Written) / max(now.Sub(p.start).Seconds(), 0.001)
	if !s.Complete {
		p.print(fmt.Sprintf("embedded %d of %d changed chunks so far (%d chunks read; %.0f/s)", s.Written, s.Changed, s.Read, rate), false)
		return
	}
	eta := time.Duration(float64(s.Changed-s.Written)/max(rate, 0.001)) * time.Second
	p.print(fmt.Sprintf("embedded %d/%d changed chunks (%.0f/s, ETA %s)", s.Written, s.Changed, rate, eta.Round(time.Second)), false)
}

// print writes line: kept (a line of its own) or redrawn on a terminal;
// p.mu is held.
func (p *progress) print(line string, keep bool) {
	switch {
	case !p.terminal:
		fmt.Fprintln(p.out, line)
	case keep:
		fmt.Fprintf(p.out, "\r\033[K%s\n", line)
		p.drawn = false
	default:
		fmt.Fprintf(p.out, "\r\033[K%s", line)
		p.drawn = true
	}
}

func (p *progress) interval() time.Duration {
	if p.terminal {
		return 100 * time.Millisecond
	}
	return 5 * time.Second
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.out)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
