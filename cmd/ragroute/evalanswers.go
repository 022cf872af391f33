package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// runEvalAnswers runs the questions end to end through the route's turn
// with a real chat model, per answer mode, and scores the answers (see
// internal/eval, answers.go).
func runEvalAnswers(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ragroute eval-answers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := addCorpusFlags(fs)
	chatURL := fs.String("chat-base-url", "", "OpenAI-compatible chat endpoint (not needed for --modes extractive or --curve-only)")
	chatModel := fs.String("chat-model", "", "chat model name")
	modes := fs.String("modes", strings.Join(eval.AnswerModes(), ","), "answer modes to run, comma-separated: "+strings.Join(eval.AnswerModes(), ", "))
	limit := fs.Int("limit", 0, "run the first N questions only (0: all)")
	concurrency := fs.Int("concurrency", 1, "turns at once (a local model serves one at a time)")
	turnTimeout := fs.Duration("turn-timeout", 3*time.Minute, "bound of one turn")
	contextTokens := fs.Int("context-tokens", 2048, "the route's window.contextTokens")
	answerReserve := fs.Int("answer-reserve", 512, "the route's window.answerReserveTokens (and the answer's max tokens)")
	// Near-greedy: the generative modes then get (nearly) the same answer
	// and differ by what their policy shows. Not 0: a configured zero is
	// left out of the request, and the server's default applies.
	temperature := fs.Float64("temperature", 0.01, "the chat model's sampling temperature")
	threshold := fs.Float64("threshold", 0, "answer.grounding.threshold (0: the route's default)")
	fallbackBelow := fs.Float64("fallback-below", 0, "answer.grounding.fallbackBelow (0: the route's default)")
	curve := fs.Bool("grounding-curve", false, "also print the grounding threshold's calibration curve")
	curveOnly := fs.Bool("curve-only", false, "only the calibration curve: no chat model")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var modeList []string
	for _, m := range strings.Split(*modes, ",") {
		if m = strings.TrimSpace(m); m != "" {
			modeList = append(modeList, m)
		}
	}
	needsChat := !*curveOnly && slices.ContainsFunc(modeList, func(m string) bool { return m != eval.ModeExtractive })
	if in.missing() || (needsChat && (*chatURL == "" || *chatModel == "")) {
		fmt.Fprintln(stderr, "ragroute eval-answers: --milvus-uri, --embedding-base-url, --embedding-model (and --chat-base-url, --chat-model for the generative modes) are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := in.connect(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-answers:", err)
		return 1
	}
	defer client.Close(context.WithoutCancel(ctx))
	env := environment(os.Getenv)
	opts := eval.AnswersOptions{
		Options:   in.options(client),
		ChatModel: *chatModel, Modes: modeList, Limit: *limit, Turns: *concurrency, TurnTimeout: *turnTimeout,
		ContextTokens: *contextTokens, AnswerReserve: *answerReserve, Threshold: *threshold, FallbackBelow: *fallbackBelow,
		Curve: *curve, CurveOnly: *curveOnly,
	}
	if needsChat {
		opts.Chat = newChat(podconfig.ChatModel{BaseURL: *chatURL, Name: *chatModel, APIKeyEnv: podconfig.EnvModelAPIKey,
			Temperature: *temperature, MaxTokens: int32(*answerReserve),
			// A local model on a busy machine may read a full window for
			// longer than the route's default idle minute.
			IdleTimeout: podconfig.Duration(*turnTimeout)}, env)
	}
	opts.Progress = stderr
	report, err := eval.RunAnswers(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-answers:", err)
		return 1
	}
	fmt.Fprint(stdout, eval.AnswersTable(report))
	fmt.Fprintf(stdout, "run time %s\n", time.Duration(report.Seconds*float64(time.Second)).Round(time.Second))
	if *jsonOut != "" {
		if err := writeReport(*jsonOut, report); err != nil {
			fmt.Fprintln(stderr, "ragroute eval-answers:", err)
			return 1
		}
	}
	return 0
}
