package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/eval/lab"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// runEvalAnswers runs the questions end to end through the route's turn
// with a real chat model, per answer mode, and scores the answers (see
// internal/eval, answers.go).
func runEvalAnswers(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ragroute eval-answers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := addCorpusFlags(fs)
	turn := addTurnFlags(fs, lab.AnswerModes(), 3*time.Minute, "bound of one turn", 2048)
	threshold := fs.Float64("threshold", 0, "answer.grounding.threshold (0: the route's default)")
	fallbackBelow := fs.Float64("fallback-below", 0, "answer.grounding.fallbackBelow (0: the route's default)")
	curve := fs.Bool("grounding-curve", false, "also print the grounding threshold's calibration curve")
	curveOnly := fs.Bool("curve-only", false, "only the calibration curve: no chat model")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	modeList := turn.modeList()
	needsChat := !*curveOnly && slices.ContainsFunc(modeList, func(m string) bool { return m != lab.ModeExtractive })
	if in.missing() || (needsChat && (turn.chatURL == "" || turn.chatModel == "")) {
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
	opts := lab.AnswersOptions{
		Options:   in.options(client),
		ChatModel: turn.chatModel, Modes: modeList, Limit: turn.limit, Turns: turn.concurrency, TurnTimeout: turn.turnTimeout,
		ContextTokens: turn.contextTokens, AnswerReserve: turn.answerReserve, Threshold: *threshold, FallbackBelow: *fallbackBelow,
		Curve: *curve, CurveOnly: *curveOnly,
	}
	if needsChat {
		opts.Chat = assembly.Chat(podconfig.ChatModel{BaseURL: turn.chatURL, Name: turn.chatModel, APIKeyEnv: podconfig.EnvModelAPIKey,
			Temperature: turn.temperature, MaxTokens: int32(turn.answerReserve),
			// A local model on a busy machine may read a full window for
			// longer than the route's default idle minute.
			IdleTimeout: podconfig.Duration(turn.turnTimeout)}, os.Getenv)
	}
	opts.Progress = stderr
	report, err := lab.RunAnswers(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-answers:", err)
		return 1
	}
	fmt.Fprint(stdout, lab.AnswersTable(report))
	fmt.Fprintf(stdout, "run time %s\n", time.Duration(report.Seconds*float64(time.Second)).Round(time.Second))
	if turn.jsonOut != "" {
		if err := writeReport(turn.jsonOut, report); err != nil {
			fmt.Fprintln(stderr, "ragroute eval-answers:", err)
			return 1
		}
	}
	return 0
}
