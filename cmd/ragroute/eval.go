package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ragroute/ragroute/internal/eval/lab"
)

// runEval measures retrieval quality of the chunking and search ablations
// on a corpus and question set (see internal/eval).
func runEval(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ragroute eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := addCorpusFlags(fs)
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	peer := fs.String("peer", "", "another system's results (hack/compare) to score beside ragroute's")
	explain := fs.Bool("explain", false, "print the route body's misses: each answerable question without a hit in its top 5")
	concurrency := fs.Int("concurrency", 4, "questions searched at once")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if in.missing() {
		fmt.Fprintln(stderr, "ragroute eval: --milvus-uri, --embedding-base-url and --embedding-model are required")
		return 2
	}
	route, deviations, err := in.routeUnderTest(nil)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := in.connect(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval:", err)
		return 1
	}
	defer client.Close(context.WithoutCancel(ctx))
	opts := in.options(client)
	opts.Progress, opts.Peer, opts.Concurrency = stderr, *peer, *concurrency
	opts.Route, opts.Deviations = route, deviations
	report, err := lab.Run(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval:", err)
		return 1
	}
	fmt.Fprint(stdout, lab.Table(report))
	if *explain {
		fmt.Fprint(stdout, lab.Explain(report.Misses))
	}
	if *jsonOut != "" {
		if err := writeReport(*jsonOut, report); err != nil {
			fmt.Fprintln(stderr, "ragroute eval:", err)
			return 1
		}
	}
	return 0
}
