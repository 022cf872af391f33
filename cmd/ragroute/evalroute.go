package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/eval/live"
)

// Exit codes of eval-route beyond 0: 1 could not run, 2 bad usage, and
// thresholdsMissed when it ran and a figure is below its minimum, so that
// a pipeline tells a worse route from a broken run.
const thresholdsMissed = 3

// thresholdFlag is a minimum flag, the summary figure it gates, and the
// scope that does not measure that figure.
type thresholdFlag struct{ flag, figure, unmeasuredIn, help string }

func thresholdFlags() []thresholdFlag {
	return []thresholdFlag{
		{"min-recall-at-5", "recallAt5", live.ScopeAnswers, "fail (exit 3) when recall@5 is below this"},
		{"min-ndcg-10", "ndcgAt10", live.ScopeAnswers, "fail (exit 3) when nDCG@10 is below this"},
		{"min-grounded-ratio", "groundedRatio", live.ScopeRetrieval, "fail (exit 3) when the mean grounded ratio is below this"},
		{"min-not-found", "notFoundOnUnanswerable", "", "fail (exit 3) when the not-found rate on unanswerable questions is below this"},
	}
}

// runEvalRoute scores a deployed route over HTTP (see internal/eval,
// live.go).
func runEvalRoute(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ragroute eval-route", flag.ContinueOnError)
	fs.SetOutput(stderr)
	routeURL := fs.String("route", "", "the route's base URL, e.g. http://support.team-a.svc:8080")
	questions := fs.String("questions", "", "questions, JSON lines (test/eval/README.md); several files comma-separated")
	source := fs.String("source", "", "the route's source name of the corpus the gold files are relative to (default: --corpus's folder name)")
	corpus := fs.String("corpus", "", "the corpus folder, to also count results by the gold section's text (optional)")
	scope := fs.String("scope", live.ScopeRetrieval, "retrieval (POST /v1/search), answers (whole turns) or both")
	var headers, headerFiles repeated
	fs.Var(&headers, "header", "'Name: value' on every request (a trusted proxy's user and groups); repeatable")
	fs.Var(&headerFiles, "header-file", "'Name=/path': a header whose value is read from a file (the proxy's secret); repeatable")
	tokenFile := fs.String("token-file", "", "a file holding a bearer token (JWT routes)")
	maxConcurrent := fs.Int("max-concurrent", 2, "questions in flight at once")
	timeout := fs.Duration("timeout", 60*time.Second, "bound of one request (a turn's stream included)")
	deadline := fs.Duration("deadline", 15*time.Minute, "bound of the whole run")
	retries := fs.Int("retries", 5, "retries of a request the route answers 429, each after its Retry-After")
	configHash := fs.String("config-hash", "", "the route config this run measures (the QueryRoute's status.configHash): answers from replicas of another config are asked again")
	configWait := fs.Duration("config-wait", 2*time.Minute, "how long answers of another config than --config-hash are asked again before the run fails")
	alpha := fs.Float64("calibration-alpha", eval.DefaultCalibrationAlpha, "the share of answerable questions the recommended answerability threshold may refuse (scope answers or both; 0 < alpha < 0.5)")
	jsonOut := fs.String("json", "", "write the summary as JSON to this file")
	resultsOut := fs.String("results", "", "write the per-question results, misses first, as JSON to this file")
	resultsMax := fs.Int("results-max-bytes", 900000, "cut --results to this many bytes (a ConfigMap holds 1 MiB)")
	terminationLog := fs.String("termination-log", "", "write the summary and the misses that fit, compact, in 4 KiB, to this file (a pod's /dev/termination-log, which a RouteEvaluation's operator reads)")
	gates := thresholdFlags()
	minimums := make([]*float64, len(gates))
	for i, t := range gates {
		minimums[i] = fs.Float64(t.flag, 0, t.help)
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var thresholds []live.Threshold
	for i, t := range gates {
		if !set[t.flag] {
			continue
		}
		if t.unmeasuredIn == *scope {
			fmt.Fprintf(stderr, "ragroute eval-route: --%s measures nothing in --scope %s\n", t.flag, *scope)
			return 2
		}
		thresholds = append(thresholds, live.Threshold{Figure: t.figure, Min: *minimums[i]})
	}
	if *source == "" && *corpus != "" {
		*source = filepath.Base(filepath.Clean(*corpus))
	}
	if msg := evalRouteUsage(*routeURL, *questions, *source, *scope, *maxConcurrent, *timeout, *deadline, *configWait, *retries, *resultsMax); msg != "" {
		fmt.Fprintln(stderr, "ragroute eval-route:", msg)
		return 2
	}
	if !(*alpha > 0 && *alpha < eval.MaxCalibrationAlpha) {
		fmt.Fprintf(stderr, "ragroute eval-route: --calibration-alpha %g: want more than 0 and less than %g\n", *alpha, eval.MaxCalibrationAlpha)
		return 2
	}
	header, err := identityHeaders(headers, headerFiles, *tokenFile)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-route:", err)
		return 2
	}
	qs, err := eval.LoadQuestions(strings.Split(*questions, ",")...)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-route:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()
	report, err := live.Run(ctx, live.Options{
		BaseURL: *routeURL, Header: header, Questions: qs, Source: *source, Corpus: *corpus, Scope: *scope,
		MaxConcurrent: *maxConcurrent, Timeout: *timeout, Retries: *retries, Progress: stderr,
		ConfigHash: *configHash, ConfigWait: *configWait, CalibrationAlpha: *alpha,
	})
	if err != nil {
		fmt.Fprintln(stderr, "ragroute eval-route:", err)
		return 1
	}
	fmt.Fprint(stdout, live.Table(report))
	if err := writeRouteOutputs(report, *jsonOut, *resultsOut, *resultsMax); err != nil {
		fmt.Fprintln(stderr, "ragroute eval-route:", err)
		return 1
	}
	if err := writeTerminationLog(report, *terminationLog); err != nil {
		fmt.Fprintln(stderr, "ragroute eval-route:", err)
		return 1
	}
	if below := report.Summary.Below(thresholds); len(below) > 0 {
		for _, b := range below {
			fmt.Fprintln(stdout, "below threshold:", b)
		}
		return thresholdsMissed
	}
	return 0
}

// evalRouteUsage is what is wrong with the flags, or "".
func evalRouteUsage(routeURL, questions, source, scope string, maxConcurrent int, timeout, deadline, configWait time.Duration, retries, resultsMax int) string {
	u, err := url.Parse(routeURL)
	switch {
	case routeURL == "":
		return "--route is required (the route's base URL)"
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Sprintf("--route %q: want an http:// or https:// base URL", routeURL)
	case questions == "":
		return "--questions is required"
	case source == "":
		return "--source (or --corpus) is required: gold files are named relative to that source"
	case scope != live.ScopeRetrieval && scope != live.ScopeAnswers && scope != live.ScopeBoth:
		return fmt.Sprintf("--scope %q: want retrieval, answers or both", scope)
	case maxConcurrent < 1:
		return "--max-concurrent must be at least 1"
	case timeout <= 0 || deadline <= 0:
		return "--timeout and --deadline must be positive"
	case configWait < 0:
		return "--config-wait must not be negative"
	case retries < 0:
		return "--retries must not be negative"
	case resultsMax < 1024:
		return "--results-max-bytes must be at least 1024"
	}
	return ""
}

// writeRouteOutputs writes the summary and the results where asked.
func writeRouteOutputs(report live.Report, jsonOut, resultsOut string, resultsMax int) error {
	if jsonOut != "" {
		if err := writeReport(jsonOut, report.Summary); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if resultsOut == "" {
		return nil
	}
	data, err := live.EncodeResults(report.Results, resultsMax)
	if err != nil {
		return fmt.Errorf("--results: %w", err)
	}
	if err := os.WriteFile(resultsOut, data, 0o644); err != nil {
		return fmt.Errorf("--results: %w", err)
	}
	return nil
}

// writeTerminationLog writes the operator's compact report (see
// live.EncodeTermination) where asked.
func writeTerminationLog(report live.Report, path string) error {
	if path == "" {
		return nil
	}
	data, err := live.EncodeTermination(report, live.TerminationMessageMax)
	if err != nil {
		return fmt.Errorf("--termination-log: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("--termination-log: %w", err)
	}
	return nil
}
