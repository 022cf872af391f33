package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/eval/lab"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// runEvalAgentic runs multi-part questions end to end through the route's
// turn with a real chat model, in single-round and in agentic mode, and
// scores what each mode's answer was built from (see internal/eval,
// agentic.go).
func runEvalAgentic(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ragroute eval-agentic", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := addCorpusFlags(fs)
	// The corpus flags' --questions, defaulting to the multi-part set.
	fs.Lookup("questions").DefValue = "test/eval/multipart.jsonl"
	_ = fs.Set("questions", "test/eval/multipart.jsonl")
	turn := addTurnFlags(fs, lab.AgenticModes(), 5*time.Minute, "bound of one turn (an agentic turn makes many model calls)")
	protocol := fs.String("tool-protocol", "", "agentic.toolProtocol in place of the route's: auto, native or json (a deviation)")
	policy := fs.String("search-policy", "", "model.searchPolicy in place of the route's: always or modelDecides (a deviation)")
	maxFragments := fs.Int("max-fragments", 0, "retrieval.maxFragments in place of the route's (a deviation)")
	rerankTopN := fs.Int("rerank-top-n", 0, "rerank.crossEncoder.topN in place of the route's (a deviation)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if in.missing() || turn.chatURL == "" || turn.chatModel == "" {
		fmt.Fprintln(stderr, "ragroute eval-agentic: --milvus-uri, --embedding-base-url, --embedding-model, --chat-base-url and --chat-model are required")
		return 2
	}
	route, deviations, err := in.routeUnderTest(func(cfg *podconfig.RouteConfig) {
		turn.apply(cfg)
		if in.set("tool-protocol") {
			cfg.ToolProtocol = podconfig.ToolProtocol(*protocol)
		}
		if in.set("search-policy") {
			cfg.Model.SearchPolicy = podconfig.SearchPolicy(*policy)
		}
		if in.set("max-fragments") {
			cfg.Retrieval.MaxFragments = int32(*maxFragments)
		}
		if ce := cfg.Rerank.CrossEncoder; ce != nil && in.set("rerank-top-n") {
			ce.TopN = int32(*rerankTopN)
		}
	})
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-agentic:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := in.connect(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-agentic:", err)
		return 1
	}
	defer client.Close(context.WithoutCancel(ctx))
	opts := lab.AgenticOptions{
		Options:   in.options(client),
		ChatModel: turn.chatModel, Modes: turn.modeList(), Limit: turn.limit, Turns: turn.concurrency, TurnTimeout: turn.turnTimeout,
		Chat: assembly.Chat(route.Model, os.Getenv),
	}
	opts.Route, opts.Deviations = route, deviations
	opts.Progress = stderr
	report, err := lab.RunAgentic(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-agentic:", err)
		return 1
	}
	fmt.Fprint(stdout, lab.AgenticTable(report))
	fmt.Fprintf(stdout, "run time %s\n", time.Duration(report.Seconds*float64(time.Second)).Round(time.Second))
	if turn.jsonOut != "" {
		if err := writeReport(turn.jsonOut, report); err != nil {
			fmt.Fprintln(stderr, "ragroute eval-agentic:", err)
			return 1
		}
	}
	return 0
}
