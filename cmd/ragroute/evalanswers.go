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
	turn := addTurnFlags(fs, lab.AnswerModes(), 3*time.Minute, "bound of one turn")
	threshold := fs.Float64("threshold", 0, "answer.grounding.supportThreshold in place of the route's (a deviation)")
	fallbackBelow := fs.Float64("fallback-below", 0, "answer.grounding.fallbackBelow in place of the route's (a deviation)")
	curve := fs.Bool("grounding-curve", false, "also print the grounding threshold's calibration curve")
	curveOnly := fs.Bool("curve-only", false, "only the calibration curve: no chat model")
	supportLabels := fs.String("support-labels", "", "also score the support judge against the labelled sentences in this folder (test/eval/support)")
	supportOnly := fs.Bool("support-only", false, "only the support judge against --support-labels: no chat model")
	judgeURL := fs.String("judge-base-url", "", "answer.judge.baseURL in place of the route's (a deviation): the checks ask it, and --support-labels also scores the grounding judge; its key in "+podconfig.EnvJudgeAPIKey)
	judgeModel := fs.String("judge-model", "", "answer.judge.name, with --judge-base-url")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *supportOnly && *supportLabels == "" {
		fmt.Fprintln(stderr, "ragroute eval-answers: --support-only needs --support-labels")
		return 2
	}
	if (*judgeURL == "") != (*judgeModel == "") {
		fmt.Fprintln(stderr, "ragroute eval-answers: --judge-base-url and --judge-model go together")
		return 2
	}
	modeList := turn.modeList()
	needsChat := !*curveOnly && !*supportOnly && slices.ContainsFunc(modeList, func(m string) bool { return m != lab.ModeExtractive })
	if in.missing() || (needsChat && (turn.chatURL == "" || turn.chatModel == "")) {
		fmt.Fprintln(stderr, "ragroute eval-answers: --milvus-uri, --embedding-base-url, --embedding-model (and --chat-base-url, --chat-model for the generative modes) are required")
		return 2
	}
	route, deviations, err := in.routeUnderTest(func(cfg *podconfig.RouteConfig) {
		turn.apply(cfg)
		if in.set("threshold") {
			cfg.Answer.Grounding.SupportThreshold = *threshold
		}
		if in.set("fallback-below") {
			cfg.Answer.Grounding.FallbackBelow = *fallbackBelow
		}
		if *judgeURL != "" {
			judge := podconfig.Judge{BaseURL: *judgeURL, Name: *judgeModel, APIKeyEnv: podconfig.EnvJudgeAPIKey}
			if cfg.Answer.Judge != nil {
				judge.CalibratedBy = cfg.Answer.Judge.CalibratedBy
			}
			cfg.Answer.Judge = &judge
		}
	})
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-answers:", err)
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
		Curve: *curve, CurveOnly: *curveOnly, SupportLabels: *supportLabels, SupportOnly: *supportOnly,
	}
	opts.Route, opts.Deviations = route, deviations
	if route.Model.BaseURL != "" {
		opts.Chat = assembly.Chat(route.Model, os.Getenv)
	}
	if j := route.Answer.Judge; j != nil {
		opts.Judge, opts.JudgeModel = assembly.Judge(*j, os.Getenv), j.Name
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
