package eval

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// curveMode runs extractive turns only to learn what a question packs,
// for the grounding curve when no mode ran.
const curveMode = "curve"

// fragmentRecorder is the searcher's cache: it never hits, and keeps
// every fragment a search returned, so a turn's retrieval event (which
// names sources, not texts) can be scored by the text its fragments hold.
type fragmentRecorder struct {
	mu    sync.Mutex
	byKey map[string]retrieval.Fragment
}

func newFragmentRecorder() *fragmentRecorder {
	return &fragmentRecorder{byKey: map[string]retrieval.Fragment{}}
}

func fragmentKey(sourceURI, title string, headingPath []string) string {
	return sourceURI + "\x00" + title + "\x00" + strings.Join(headingPath, "\x00")
}

func (c *fragmentRecorder) Get(context.Context, string) ([]retrieval.Fragment, bool) {
	return nil, false
}

func (c *fragmentRecorder) Put(_ context.Context, _ string, fragments []retrieval.Fragment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range fragments {
		c.byKey[fragmentKey(f.SourceURI, f.Title, f.HeadingPath)] = f
	}
}

// packed is the fragment a retrieval event reported under its marker.
func (c *fragmentRecorder) packed(s route.RetrievalSource) (retrieval.Fragment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.byKey[fragmentKey(s.SourceURI, s.Title, s.HeadingPath)]
	f.Marker = s.Marker
	return f, ok
}

// runTurns runs every question in every mode, opts.Turns at once,
// question by question so that a cut-short run still covers each mode.
func (a *answersRun) runTurns(ctx context.Context, modes []string) (map[string][]turnOutcome, error) {
	out := map[string][]turnOutcome{}
	for _, m := range modes {
		out[m] = make([]turnOutcome, len(a.questions))
	}
	var mu sync.Mutex
	var done atomic.Int64
	total := len(modes) * len(a.questions)
	group, ctx := errgroup.WithContext(ctx)
	group.SetLimit(a.opts.Turns)
	for i, q := range a.questions {
		for _, mode := range modes {
			group.Go(func() error {
				o := a.runTurn(ctx, mode, q)
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("answer evaluation: %w", err)
				}
				mu.Lock()
				out[mode][i] = o
				mu.Unlock()
				logf(a.opts.Progress, "[%d/%d] %s %-16s %s\n", done.Add(1), total, q.ID, mode, brief(o))
				return nil
			})
		}
	}
	return out, group.Wait()
}

// runTurn runs one question as a first turn under its own deadline and
// digests its events; a failed turn is an outcome, not an error.
func (a *answersRun) runTurn(ctx context.Context, mode string, q Question) turnOutcome {
	ctx, cancel := context.WithTimeout(ctx, a.opts.TurnTimeout)
	defer cancel()
	var mu sync.Mutex
	var events []timedEvent
	start := time.Now()
	a.runners[mode].Run(ctx, route.TurnInput{
		ID:         q.ID + "-" + mode,
		Messages:   []model.Message{{Role: model.RoleUser, Content: q.Question}},
		Principals: []string{"public"},
	}, func(e route.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, timedEvent{Event: e, At: time.Since(start)})
	})
	total := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	return digest(q, mode, events, total)
}

// brief is a turn's progress line.
func brief(o turnOutcome) string {
	c := o.Completed
	switch {
	case c == nil:
		return "failed: " + o.Err
	case c.NotFound:
		return fmt.Sprintf("%5.1f s  not found", o.Total.Seconds())
	}
	ratio := "-"
	if c.GroundedRatio != nil {
		ratio = fmt.Sprintf("%.2f", *c.GroundedRatio)
	}
	return fmt.Sprintf("%5.1f s  first token %.1f s, grounded %s, cited %v", o.Total.Seconds(), o.TTFT.Seconds(), ratio, o.Cited)
}

// fragmentHolds is what a packed fragment shows, where a URL the answer
// shows may come from: its text, source, images, and its label (a heading
// may be a link; extractive answers quote under the label).
func fragmentHolds(f retrieval.Fragment) []string {
	return append([]string{f.Text, f.SourceURI, f.Label()}, f.ImageURLs...)
}

// complete fills what scoring needs beyond the events: the packed
// fragments' texts and links, and for extractive answers (which the route
// does not check) the grounded ratio measured with the route's scorer.
func (a *answersRun) complete(ctx context.Context, outcomes []turnOutcome) error {
	for i := range outcomes {
		o := &outcomes[i]
		o.Units, o.Allowed = map[string]Unit{}, []string{a.prompt.Platform}
		for _, f := range a.packedFragments(*o) {
			o.Units[f.Marker] = Unit{Source: f.Source, Text: f.Text, HeadingPath: f.HeadingPath}
			o.Allowed = append(o.Allowed, fragmentHolds(f)...)
		}
		if o.Mode != ModeExtractive || !o.answered() || o.Completed.GroundedRatio != nil {
			continue
		}
		ratio, err := a.checkExtractive(ctx, *o)
		if err != nil {
			return fmt.Errorf("question %s: check the extractive answer: %w", o.Question.ID, err)
		}
		o.Checked = ratio
	}
	return nil
}

// packedFragments are a turn's packed fragments, with their markers, in
// marker order.
func (a *answersRun) packedFragments(o turnOutcome) []retrieval.Fragment {
	var out []retrieval.Fragment
	for _, s := range o.Sources {
		if f, found := a.fragments.packed(s); found {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(x, y retrieval.Fragment) int { return markerNumber(x.Marker) - markerNumber(y.Marker) })
	return out
}

// markerNumber is n of the marker Sn.
func markerNumber(marker string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(marker, "S"))
	return n
}

// checkExtractive scores each quoted line of an extractive answer with
// the route's grounding scorer: the share supported at the threshold.
func (a *answersRun) checkExtractive(ctx context.Context, o turnOutcome) (*float64, error) {
	lines := quotedLines(o.Shown)
	if len(lines) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.TurnTimeout)
	defer cancel()
	scores, err := answer.ScoreSupport(ctx, a.query, lines, a.packedFragments(o))
	if err != nil {
		return nil, err
	}
	supported := 0
	for _, g := range scores {
		if g.Score >= a.opts.Threshold && len(g.Invented) == 0 {
			supported++
		}
	}
	ratio := float64(supported) / float64(len(scores))
	return &ratio, nil
}

// quotedLines are the lines an extractive answer quotes ("> …"), without
// code fences and lines with no letters.
func quotedLines(answer string) []string {
	var out []string
	for _, line := range strings.Split(answer, "\n") {
		text, ok := strings.CutPrefix(line, ">")
		text = strings.TrimSpace(text)
		if !ok || strings.HasPrefix(text, "```") || !strings.ContainsFunc(text, isLetter) {
			continue
		}
		out = append(out, text)
	}
	return out
}

func isLetter(r rune) bool { return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }
