package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/model"
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
	chatURL := fs.String("chat-base-url", "", "OpenAI-compatible chat endpoint")
	chatModel := fs.String("chat-model", "", "chat model name")
	modes := fs.String("modes", strings.Join(eval.AgenticModes(), ","), "turn modes to run, comma-separated: "+strings.Join(eval.AgenticModes(), ", "))
	limit := fs.Int("limit", 0, "run the first N questions only (0: all)")
	concurrency := fs.Int("concurrency", 1, "turns at once (a local model serves one at a time)")
	turnTimeout := fs.Duration("turn-timeout", 5*time.Minute, "bound of one turn (an agentic turn makes many model calls)")
	contextTokens := fs.Int("context-tokens", 4096, "the route's window.contextTokens")
	answerReserve := fs.Int("answer-reserve", 512, "the route's window.answerReserveTokens (and the answer's max tokens)")
	protocol := fs.String("tool-protocol", "", "the route's agentic.toolProtocol: auto (also when empty), native or json")
	policy := fs.String("search-policy", string(podconfig.SearchAlways), "the route's model.searchPolicy: always or modelDecides")
	// Near-greedy, as eval-answers: the modes then differ by the harness,
	// not by sampling. Not 0: a configured zero is left out of the request.
	temperature := fs.Float64("temperature", 0.01, "the chat model's sampling temperature")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if in.missing() || *chatURL == "" || *chatModel == "" {
		fmt.Fprintln(stderr, "ragroute eval-agentic: --milvus-uri, --embedding-base-url, --embedding-model, --chat-base-url and --chat-model are required")
		return 2
	}
	var modeList []string
	for _, m := range strings.Split(*modes, ",") {
		if m = strings.TrimSpace(m); m != "" {
			modeList = append(modeList, m)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := in.connect(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-agentic:", err)
		return 1
	}
	defer client.Close(context.WithoutCancel(ctx))
	opts := eval.AgenticOptions{
		Options:   in.options(client),
		ChatModel: *chatModel, Modes: modeList, Limit: *limit, Turns: *concurrency, TurnTimeout: *turnTimeout,
		ContextTokens: *contextTokens, AnswerReserve: *answerReserve, Policy: podconfig.SearchPolicy(*policy),
		ToolProtocol: podconfig.ToolProtocol(*protocol),
		// model.NewChat, not newChat: a local model on a busy machine may
		// read a full window for longer than the route's default idle
		// minute and two-minute call, so both are the turn's bound.
		Chat: model.NewChat(model.ChatConfig{BaseURL: *chatURL, Model: *chatModel,
			APIKey: environment(os.Getenv).secret(podconfig.EnvModelAPIKey), Temperature: *temperature,
			MaxTokens: *answerReserve, IdleTimeout: *turnTimeout, Timeout: *turnTimeout}),
	}
	opts.Progress = stderr
	report, err := eval.RunAgentic(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-agentic:", err)
		return 1
	}
	fmt.Fprint(stdout, eval.AgenticTable(report))
	fmt.Fprintf(stdout, "run time %s\n", time.Duration(report.Seconds*float64(time.Second)).Round(time.Second))
	if *jsonOut != "" {
		if err := writeReport(*jsonOut, report); err != nil {
			fmt.Fprintln(stderr, "ragroute eval-agentic:", err)
			return 1
		}
	}
	return 0
}
