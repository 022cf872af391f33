package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// curveMode runs extractive turns only to learn what a question packs,
// for the grounding curve when no mode ran.
const curveMode = "curve"

// runTurns runs every question in every mode, opts.Turns at once,
// question by question so that a cut-short run still covers each mode.
func (a *answersRun) runTurns(ctx context.Context, modes []string) (map[string][]eval.TurnOutcome, error) {
	out := map[string][]eval.TurnOutcome{}
	for _, m := range modes {
		out[m] = make([]eval.TurnOutcome, len(a.questions))
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
				logf(a.opts.Progress, "[%d/%d] %s %-16s %s\n", done.Add(1), total, q.ID, mode, eval.Brief(o))
				return nil
			})
		}
	}
	return out, group.Wait()
}

// runTurn runs one question as a first turn and digests its events; a
// failed turn is an outcome, not an error.
func (a *answersRun) runTurn(ctx context.Context, mode string, q eval.Question) eval.TurnOutcome {
	events, total := playFirstTurn(ctx, a.runners[mode], q.ID+"-"+mode, q.Question, a.opts.TurnTimeout)
	return eval.Digest(q, mode, events, total)
}

// complete fills what scoring needs beyond the events: the packed
// fragments' texts and links, and for extractive answers (which the route
// does not check) the grounded ratio measured with the route's scorer.
func (a *answersRun) complete(ctx context.Context, outcomes []eval.TurnOutcome) error {
	for i := range outcomes {
		o := &outcomes[i]
		o.Units, o.Allowed = map[string]eval.Unit{}, []string{a.prompt.Platform}
		for _, f := range a.packedFragments(*o) {
			o.Units[f.Marker] = eval.Unit{Source: f.Source, Text: f.Text, HeadingPath: f.HeadingPath}
			o.Allowed = append(o.Allowed, eval.FragmentHolds(f)...)
		}
		if o.Mode != ModeExtractive || !o.Answered() || o.Completed.GroundedRatio != nil {
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
func (a *answersRun) packedFragments(o eval.TurnOutcome) []retrieval.Fragment {
	var out []retrieval.Fragment
	for _, s := range o.Sources {
		if f, found := a.fragments.Packed(s); found {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(x, y retrieval.Fragment) int { return eval.MarkerNumber(x.Marker) - eval.MarkerNumber(y.Marker) })
	return out
}

// checkExtractive scores each quoted line of an extractive answer with
// the route's grounding scorer: the share supported at the threshold.
func (a *answersRun) checkExtractive(ctx context.Context, o eval.TurnOutcome) (*float64, error) {
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
		if g.Score >= a.opts.Route.Answer.Grounding.SupportThreshold && len(g.Invented) == 0 {
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
