package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// The live route (`ragroute eval-route`): the questions asked over HTTP of
// a route that is deployed, as an identity it trusts, and scored by the
// same scorer as the local evaluations.

// Scopes of a live evaluation.
const (
	ScopeRetrieval = "retrieval"
	ScopeAnswers   = "answers"
	ScopeBoth      = "both"
)

// Options say which route to ask, as whom, and how hard.
type Options struct {
	// BaseURL is the route's, e.g. http://support.team-a.svc:8080.
	BaseURL string
	// Header goes on every request: the identity the route trusts.
	Header    http.Header
	Questions []eval.Question
	// Source is the route's name for the corpus the gold files are
	// relative to (sources name fragments `<source>/<path>`). Corpus, if
	// set, is that corpus's folder: a result then also counts by the gold
	// section's text, else by its exact heading path only.
	Source, Corpus string
	Scope          string
	// MaxConcurrent questions are in flight at once; Timeout bounds one
	// request (a turn's stream included); a 429 is retried Retries times.
	MaxConcurrent int
	Timeout       time.Duration
	Retries       int
	// ConfigHash, when set, is the route config the run measures (its
	// status.configHash): an answer whose podconfig.ConfigHashHeader
	// names another, from a replica of the old config during a roll or
	// just after it, is asked again, and after ConfigWait of such answers
	// the run fails (StaleConfigError). A route that names no config (run
	// by hand, or an older image) is taken as it answers.
	ConfigHash string
	ConfigWait time.Duration
	// CalibrationAlpha is the share of answerable questions the
	// answerability threshold recommended from the turns may refuse
	// (eval.CalibrateAnswerability); 0: eval.DefaultCalibrationAlpha.
	CalibrationAlpha float64
	// HTTP sends the requests; nil: a client of its own.
	HTTP *http.Client
	// Progress, if set, hears each question as it ends.
	Progress io.Writer
}

// Report is a live evaluation: its summary, its per-question results
// and the figures its table shows.
type Report struct {
	Summary Summary
	Results []Result
	URL     string
	metrics *eval.Metrics
	answers *eval.ModeFigures
}

// liveQuestion is what one question got from the route.
type liveQuestion struct {
	search eval.Outcome
	turn   eval.TurnOutcome
	err    error
}

// Run asks every question of the route and scores what it answered.
// A question that fails is scored as a miss and reported with its error;
// the run fails when the route refuses the identity, when every question
// failed, or when ctx ends first.
func Run(ctx context.Context, opts Options) (Report, error) {
	began := time.Now()
	if err := checkOptions(opts); err != nil {
		return Report{}, err
	}
	gold, err := liveGold(opts)
	if err != nil {
		return Report{}, err
	}
	client := &routeClient{base: opts.BaseURL, header: opts.Header, http: opts.HTTP, timeout: opts.Timeout, retries: opts.Retries,
		configHash: opts.ConfigHash, configWait: opts.ConfigWait}
	if client.http == nil {
		client.http = &http.Client{}
	}
	got := make([]liveQuestion, len(opts.Questions))
	fragments := eval.NewFragmentRecorder()
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	var done atomic.Int64
	group, groupCtx := errgroup.WithContext(ctx)
	group.SetLimit(opts.MaxConcurrent)
	for i, q := range opts.Questions {
		group.Go(func() error {
			got[i] = askLive(groupCtx, client, opts.Scope, q, fragments)
			if endsTheRun(got[i].err) {
				return got[i].err
			}
			fmt.Fprintf(progress, "[%d/%d] %s %s\n", done.Add(1), len(opts.Questions), q.ID, liveBrief(got[i]))
			return nil
		})
	}
	if err := group.Wait(); err != nil {
		return Report{}, err
	}
	if err := ctx.Err(); err != nil {
		return Report{}, fmt.Errorf("the run ended (--deadline or a signal) before every question was answered: %w", err)
	}
	if err := allFailed(got); err != nil {
		return Report{}, err
	}
	report := scoreLive(opts, gold, got)
	report.Summary.StartedAt = began.UTC().Truncate(time.Second)
	report.Summary.DurationMs = time.Since(began).Milliseconds()
	return report, nil
}

func checkOptions(opts Options) error {
	switch {
	case opts.Scope != ScopeRetrieval && opts.Scope != ScopeAnswers && opts.Scope != ScopeBoth:
		return fmt.Errorf("scope %q: want %s, %s or %s", opts.Scope, ScopeRetrieval, ScopeAnswers, ScopeBoth)
	case len(opts.Questions) == 0:
		return errors.New("no questions")
	case opts.MaxConcurrent < 1 || opts.Timeout <= 0 || opts.Retries < 0 || opts.ConfigWait < 0:
		return errors.New("max concurrent must be at least 1, the timeout positive, and the retries and the config wait not negative")
	case opts.CalibrationAlpha < 0 || opts.CalibrationAlpha >= eval.MaxCalibrationAlpha:
		return fmt.Errorf("calibration alpha %g: want more than 0 and less than %g", opts.CalibrationAlpha, eval.MaxCalibrationAlpha)
	}
	return nil
}

// askLive asks one question in the scope's ways, the search first.
func askLive(ctx context.Context, c *routeClient, scope string, q eval.Question, fragments *eval.FragmentRecorder) liveQuestion {
	var got liveQuestion
	if scope != ScopeAnswers {
		o, found, err := c.search(ctx, q.Question)
		if err != nil {
			return liveQuestion{err: fmt.Errorf("search: %w", err)}
		}
		got.search = o
		fragments.Put(ctx, "", found)
	}
	if scope != ScopeRetrieval {
		turn, err := c.turn(ctx, q, fragments)
		if err != nil {
			return liveQuestion{search: got.search, err: fmt.Errorf("turn: %w", err)}
		}
		got.turn = turn
	}
	return got
}

// allFailed is the first error when no question got an answer: the route
// is down or not there, not a route that scores badly.
func allFailed(got []liveQuestion) error {
	for _, g := range got {
		if g.err == nil {
			return nil
		}
	}
	return fmt.Errorf("every question failed, the first with: %w", got[0].err)
}

// liveGold is the questions' gold sections: from the corpus where one is
// given, else their files and heading paths alone.
func liveGold(opts Options) (eval.Gold, error) {
	if opts.Source == "" {
		return eval.Gold{}, errors.New("the route's source name of the question set's corpus is needed to name gold files")
	}
	if opts.Corpus == "" {
		return eval.GoldByPath(opts.Source, opts.Questions), nil
	}
	docs, err := eval.ReadCorpus(opts.Corpus, opts.Source)
	if err != nil {
		return eval.Gold{}, err
	}
	return eval.NewGold(opts.Source, docs, opts.Questions)
}

// scoreLive scores what the route answered with the local evaluations'
// scorers.
func scoreLive(opts Options, gold eval.Gold, got []liveQuestion) Report {
	report := Report{URL: opts.BaseURL}
	searches := make([]eval.Outcome, len(got))
	turns := make([]eval.TurnOutcome, len(got))
	var times []time.Duration
	for i, g := range got {
		searches[i], turns[i] = g.search, g.turn
		turns[i].Question = opts.Questions[i]
		switch {
		case g.err != nil:
		case opts.Scope == ScopeAnswers:
			times = append(times, g.turn.Total)
		default:
			times = append(times, g.search.Elapsed)
		}
	}
	s := Summary{Scope: opts.Scope, Questions: len(got),
		LatencyP50Ms: eval.PercentileMillis(times, 0.5), LatencyP95Ms: eval.PercentileMillis(times, 0.95)}
	for _, q := range opts.Questions {
		s.Answerable += b2i(q.Answerable())
	}
	for _, g := range got {
		s.Errors += b2i(g.err != nil)
	}
	if opts.Scope != ScopeAnswers {
		m := gold.Score(opts.Questions, searches, tokenize.NewBERTUncased(), eval.IntentMatches)
		m.P50Millis = s.LatencyP50Ms
		report.metrics = &m
		s.retrievalFigures(m, s.Questions-s.Answerable)
	}
	if opts.Scope != ScopeRetrieval {
		f := eval.Figures(liveMode, turns, gold)
		report.answers = &f
		s.answerFigures(f)
		alpha := opts.CalibrationAlpha
		if alpha == 0 {
			alpha = eval.DefaultCalibrationAlpha
		}
		s.Answerability = eval.CalibrateAnswerability(turns, alpha)
	}
	report.Summary = s
	report.Results = liveResults(opts, gold, got)
	return report
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// liveBrief is a question's progress line.
func liveBrief(g liveQuestion) string {
	var parts []string
	if g.err != nil {
		return "failed: " + g.err.Error()
	}
	if g.search.Elapsed > 0 {
		parts = append(parts, fmt.Sprintf("search %d results in %.0f ms", len(g.search.Units), float64(g.search.Elapsed.Microseconds())/1000))
	}
	if g.turn.Question.ID != "" {
		parts = append(parts, "turn "+eval.Brief(g.turn))
	}
	return strings.Join(parts, "; ")
}
