package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/assembly/serving"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// runFeedback runs `ragroute feedback export`: the route's down-rated
// turns as RouteEvaluation questions, read from the route's own store
// with the route's own credentials (its config and the environment its
// pods get), never through the user API.
func runFeedback(args []string, stdout, stderr io.Writer, env environment) int {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, "usage: ragroute feedback export --config route.json [--source NAME]")
		return 2
	}
	fs := flag.NewFlagSet("ragroute feedback export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "/etc/ragroute/"+podconfig.RouteFileName, "the route's config, as the operator rendered it")
	source := fs.String("source", "", "the RouteEvaluation's spec.source: gold files are written relative to it (<source>/<path> → <path>)")
	timeout := fs.Duration("timeout", time.Minute, "bounds reading the store")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	cfg, err := podconfig.LoadRoute(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute feedback export:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	n, err := exportFeedback(ctx, cfg, assembly.Secrets(env), *source, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "ragroute feedback export:", err)
		return 1
	}
	fmt.Fprintf(stderr, "ragroute feedback export: %d down-rated turns of route %s/%s\n", n, cfg.Route.Namespace, cfg.Route.Name)
	return 0
}

// exportFeedback writes the down-rated turns of the route's store to out
// as JSON lines; it notes on stderr each line an admin must complete.
func exportFeedback(ctx context.Context, cfg podconfig.RouteConfig, secrets assembly.Secrets, source string, out, stderr io.Writer) (int, error) {
	store, release, err := serving.OpenFeedback(ctx, cfg, secrets)
	if err != nil {
		return 0, err
	}
	defer release()
	rated, err := store.Verdicts(ctx)
	if err != nil {
		return 0, err
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	n := 0
	for _, r := range rated {
		if r.Verdict.Rating != turnlog.RatingDown {
			continue
		}
		q := feedbackQuestion(r, source)
		if q.Feedback.Review != "" {
			fmt.Fprintf(stderr, "%s: %s\n", q.ID, q.Feedback.Review)
		}
		if err := enc.Encode(q); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// exportedQuestion is a RouteEvaluation question (eval.Question's
// format) with what the user said, for the admin who reviews it; the
// evaluation reads the question's fields only.
type exportedQuestion struct {
	eval.Question
	Feedback exportedVerdict `json:"feedback"`
}

type exportedVerdict struct {
	TurnID         string    `json:"turn_id"`
	RatedAt        time.Time `json:"rated_at"`
	Comment        string    `json:"comment,omitempty"`
	ExpectedSource string    `json:"expected_source,omitempty"`
	Invented       bool      `json:"invented,omitempty"`
	// Answer is what the route answered; Cited the sources it cited, as
	// "<source uri> › <heading> › …".
	Answer string   `json:"answer"`
	Cited  []string `json:"cited"`
	// Review says what the admin must fill in before the line can be
	// committed; such a line has an empty gold file, which a
	// RouteEvaluation refuses.
	Review string `json:"review,omitempty"`
}

// feedbackQuestion is one down-rated turn as a question: the gold is the
// user's expected source, named as the route names sources or relative to
// source (its heading path from the turn's fragments when one of them is
// that source); an answer the user called invented with
// no expected source is unanswerable; otherwise the gold is left for the
// admin.
func feedbackQuestion(r turnlog.RatedTurn, source string) exportedQuestion {
	t, v := r.Turn, r.Verdict
	q := exportedQuestion{
		Question: eval.Question{ID: "fb-" + t.ID[:min(len(t.ID), 12)], Question: t.Question, Intent: "concept"},
		Feedback: exportedVerdict{TurnID: t.ID, RatedAt: v.At, Comment: v.Comment, ExpectedSource: v.ExpectedSource, Invented: v.Invented,
			Answer: t.Answer, Cited: []string{}},
	}
	for _, c := range t.Citations {
		q.Feedback.Cited = append(q.Feedback.Cited, strings.Join(append([]string{c.SourceURI}, c.Heading...), " › "))
	}
	switch {
	case v.ExpectedSource != "":
		gold := relativeTo(source, v.ExpectedSource)
		q.GoldFile, q.GoldHeading = &gold, []string{}
		for _, f := range t.Fragments {
			if relativeTo(source, f.SourceURI) == gold && len(f.HeadingPath) > 0 {
				q.GoldHeading = f.HeadingPath
				break
			}
		}
		if len(q.GoldHeading) == 0 {
			q.Feedback.Review = "set gold_heading_path: the expected source was not among the turn's fragments"
		}
	case v.Invented:
		q.Intent = "unanswerable"
	default:
		empty := ""
		q.GoldFile, q.GoldHeading = &empty, []string{}
		q.Feedback.Review = "set gold_file and gold_heading_path, or make it unanswerable (gold_file null, intent unanswerable): the user named no expected source"
	}
	return q
}

// relativeTo is a source URI relative to the evaluation's source:
// <source>/<path> is <path>; any other URI is kept.
func relativeTo(source, uri string) string {
	if source != "" {
		if rest, ok := strings.CutPrefix(uri, source+"/"); ok {
			return rest
		}
	}
	return uri
}
