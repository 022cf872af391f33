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

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/eval/lab"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
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
	turn := addTurnFlags(fs, lab.AgenticModes(), 5*time.Minute, "bound of one turn (an agentic turn makes many model calls)", 4096)
	protocol := fs.String("tool-protocol", "", "the route's agentic.toolProtocol: auto (also when empty), native or json")
	policy := fs.String("search-policy", string(podconfig.SearchAlways), "the route's model.searchPolicy: always or modelDecides")
	maxFragments := fs.Int("max-fragments", v1alpha1.DefaultMaxFragments, "the route's retrieval.maxFragments")
	rerankURL := fs.String("rerank-base-url", "", "the route's rerank.crossEncoder endpoint (hack/models.sh run rerank); none when empty")
	rerankModel := fs.String("rerank-model", localRerankModel, "the cross-encoder's model name")
	rerankTopN := fs.Int("rerank-top-n", 20, "rerank.crossEncoder.topN (the sample route's)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// With a cross-encoder the strict floor reads its relevance, a
	// probability: the route's default for it, cross-validated, not the
	// 0.35 of fused similarity, unless the flag says.
	strictSet := false
	fs.Visit(func(f *flag.Flag) { strictSet = strictSet || f.Name == "strict-floor" })
	if *rerankURL != "" && !strictSet {
		*in.strictFloor = v1alpha1.DefaultCrossEncoderStrictFloor
	}
	if in.missing() || turn.chatURL == "" || turn.chatModel == "" {
		fmt.Fprintln(stderr, "ragroute eval-agentic: --milvus-uri, --embedding-base-url, --embedding-model, --chat-base-url and --chat-model are required")
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
		ContextTokens: turn.contextTokens, AnswerReserve: turn.answerReserve, Policy: podconfig.SearchPolicy(*policy),
		ToolProtocol: podconfig.ToolProtocol(*protocol), MaxFragments: *maxFragments, RerankTopN: *rerankTopN,
		// model.NewChat, not newChat: a local model on a busy machine may
		// read a full window for longer than the route's default idle
		// minute and two-minute call, so both are the turn's bound.
		Chat: model.NewChat(model.ChatConfig{BaseURL: turn.chatURL, Model: turn.chatModel,
			APIKey: os.Getenv(podconfig.EnvModelAPIKey), Temperature: turn.temperature,
			MaxTokens: turn.answerReserve, IdleTimeout: turn.turnTimeout, Timeout: turn.turnTimeout}),
	}
	opts.Progress = stderr
	opts.Rerank = lab.RerankEndpoint{BaseURL: *rerankURL, Model: *rerankModel, FirstStageWeight: retrieval.DefaultFirstStageWeight}
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
