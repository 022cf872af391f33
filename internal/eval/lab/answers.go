package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// Answer-level evaluation (`make eval-answers`): each question runs as a
// whole turn through the route's own turn code (route.Runner) with a real
// chat model, over the heading-tree store and the route body that `make
// eval` scores, once per answer mode; the turns' events are scored for
// grounding, citations, invented links, honest not-found and latency.

// Answer modes an evaluation runs.
const (
	// ModeGenerative: the model writes the answer, the grounding check
	// annotates it (policy annotate).
	ModeGenerative = "generative"
	// ModeStrip: unsupported sentences are withheld (policy strip).
	ModeStrip = "generative+strip"
	// ModeFallback: an answer too little supported is replaced by the
	// extractive one (policy fallback).
	ModeFallback = "fallback"
	// ModeExtractive: the route quotes the fragments, no model.
	ModeExtractive = "extractive"
)

// AnswerModes are every mode, in the order they are reported.
func AnswerModes() []string {
	return []string{ModeGenerative, ModeStrip, ModeFallback, ModeExtractive}
}

// The platform layer the turns run under: the demo's sample
// PlatformPrompt, worded for the evaluation corpus.
const (
	answersPlatform = "You are the Argo CD documentation assistant.\n" +
		"Never reveal credentials, tokens or personal data, even if a document contains them.\n" +
		"Answer in the language of the question."
	answersNotFound = "I could not find this in the Argo CD documentation."
)

func answersPrompt() route.Prompt {
	return route.Prompt{Platform: answersPlatform, NotFound: answersNotFound, Styles: map[string]string{
		"concept": "Explain how and why; connect the ideas; short paragraphs.",
		"screen":  "Name the exact screen, field, button or menu and where it is; be brief.",
	}}
}

// AnswersOptions say what to run, with what. Options are the retrieval
// evaluation's (corpus, questions, store, embedder, vector cache, floors).
type AnswersOptions struct {
	Options
	// Chat is the chat model; ChatModel names it in the report.
	Chat      route.ChatModel
	ChatModel string
	// Modes to run (AnswerModes when empty; none with CurveOnly).
	Modes []string
	// Limit keeps the first Limit questions (0: all).
	Limit int
	// Turns is how many turns run at once (1 when 0).
	Turns int
	// TurnTimeout bounds one turn (2 minutes when 0).
	TurnTimeout time.Duration
	// The route's window (2048 / 512 when 0).
	ContextTokens, AnswerReserve int
	// Grounding's threshold and fallbackBelow (0: the route's defaults);
	// each mode sets its own policy.
	Threshold, FallbackBelow float64
	// Curve also scores the synthetic sentence sets (GroundingCurve);
	// CurveOnly runs no turns with the chat model.
	Curve, CurveOnly bool
}

// AnswersReport is what an answer-level evaluation found.
type AnswersReport struct {
	Model         string             `json:"model"`
	Questions     int                `json:"questions"`
	Answerable    int                `json:"answerable"`
	Unanswerable  int                `json:"unanswerable"`
	ContextTokens int                `json:"context_tokens"`
	AnswerReserve int                `json:"answer_reserve_tokens"`
	Threshold     float64            `json:"threshold"`
	FallbackBelow float64            `json:"fallback_below"`
	Modes         []eval.ModeFigures `json:"modes"`
	// Curve is the grounding threshold's calibration curve; Histogram the
	// real answers' sentence scores and Ratios their grounded ratios, by
	// quarter (the first generative mode's), for fallbackBelow.
	Curve     *GroundingCurve `json:"grounding_curve,omitempty"`
	Histogram []ScoreBin      `json:"score_histogram,omitempty"`
	Ratios    []eval.RatioBin `json:"grounded_ratio_histogram,omitempty"`
	// Turns are the turns one by one, for reading the answers.
	Turns   []TurnSummary `json:"turns"`
	Seconds float64       `json:"seconds"`
}

// TurnSummary is one turn as the JSON report keeps it.
type TurnSummary struct {
	Question       string   `json:"question"`
	Mode           string   `json:"mode"`
	Answer         string   `json:"answer"`
	NotFound       bool     `json:"not_found"`
	GroundedRatio  *float64 `json:"grounded_ratio,omitempty"`
	Cited          []string `json:"cited,omitempty"`
	GoldCited      bool     `json:"gold_cited"`
	UnsupportedURL []string `json:"unsupported_urls,omitempty"`
	AnswerReplaced bool     `json:"answer_replaced,omitempty"`
	Withheld       int      `json:"withheld_sentences,omitempty"`
	// Sentences are the route's grounding events: each checked sentence,
	// its score and support.
	Sentences   []answer.Grounding `json:"sentences,omitempty"`
	TTFTMillis  float64            `json:"ttft_ms"`
	TotalMillis float64            `json:"total_ms"`
	Error       string             `json:"error,omitempty"`
}

// RunAnswers ingests the corpus as `make eval` does, runs every question
// as a turn in each mode and scores the turns.
func RunAnswers(ctx context.Context, opts AnswersOptions) (AnswersReport, error) {
	began := time.Now()
	opts = answersDefaults(opts)
	if err := checkModes(opts.Modes); err != nil {
		return AnswersReport{}, err
	}
	if opts.Chat == nil && len(opts.Modes) > 0 && !onlyExtractive(opts.Modes) {
		return AnswersReport{}, fmt.Errorf("answer evaluation: modes %s need a chat model", strings.Join(opts.Modes, ", "))
	}
	r, err := prepare(ctx, opts.Options)
	if err != nil {
		return AnswersReport{}, err
	}
	if opts.Limit > 0 && opts.Limit < len(r.questions) {
		r.questions = r.questions[:opts.Limit]
	}
	a, err := newAnswersRun(r, opts)
	if err != nil {
		return AnswersReport{}, err
	}
	report := AnswersReport{Model: opts.ChatModel, Questions: len(r.questions), ContextTokens: opts.ContextTokens,
		AnswerReserve: opts.AnswerReserve, Threshold: opts.Threshold, FallbackBelow: opts.FallbackBelow}
	for _, q := range r.questions {
		if q.Answerable() {
			report.Answerable++
		} else {
			report.Unanswerable++
		}
	}
	outcomes, err := a.runTurns(ctx, opts.Modes)
	if err != nil {
		return report, err
	}
	for _, mode := range opts.Modes {
		if err := a.complete(ctx, outcomes[mode]); err != nil {
			return report, err
		}
		report.Modes = append(report.Modes, eval.Figures(mode, outcomes[mode], r.gold))
		for _, o := range outcomes[mode] {
			report.Turns = append(report.Turns, summarize(o, r.gold))
		}
	}
	for _, mode := range opts.Modes {
		if mode != ModeExtractive {
			report.Histogram = scoreHistogram(outcomes[mode], opts.Threshold)
			report.Ratios = eval.RatioHistogram(outcomes[mode], r.gold)
			break
		}
	}
	if opts.Curve {
		curve, err := a.groundingCurve(ctx, outcomes)
		if err != nil {
			return report, err
		}
		report.Curve = &curve
	}
	report.Seconds = time.Since(began).Seconds()
	return report, nil
}

func answersDefaults(opts AnswersOptions) AnswersOptions {
	if opts.Modes == nil && !opts.CurveOnly {
		opts.Modes = AnswerModes()
	}
	if opts.CurveOnly {
		opts.Modes, opts.Curve = nil, true
	}
	if opts.Turns <= 0 {
		opts.Turns = 1
	}
	if opts.TurnTimeout <= 0 {
		opts.TurnTimeout = 2 * time.Minute
	}
	if opts.ContextTokens <= 0 {
		opts.ContextTokens = 2048
	}
	if opts.AnswerReserve <= 0 {
		opts.AnswerReserve = 512
	}
	if opts.Threshold <= 0 {
		opts.Threshold = answer.DefaultGroundingThreshold
	}
	if opts.FallbackBelow <= 0 {
		opts.FallbackBelow = answer.DefaultFallbackBelow
	}
	return opts
}

func checkModes(modes []string) error {
	for _, m := range modes {
		if !slices.Contains(AnswerModes(), m) {
			return fmt.Errorf("answer evaluation: unknown mode %q (want %s)", m, strings.Join(AnswerModes(), ", "))
		}
	}
	return nil
}

func onlyExtractive(modes []string) bool {
	for _, m := range modes {
		if m != ModeExtractive {
			return false
		}
	}
	return true
}

// answersRun is one answer evaluation's shared state.
type answersRun struct {
	*run
	opts      AnswersOptions
	fragments *eval.FragmentRecorder
	runners   map[string]*route.Runner
	prompt    route.Prompt
}

func newAnswersRun(r *run, opts AnswersOptions) (*answersRun, error) {
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		return nil, fmt.Errorf("chat token counter: %w", err)
	}
	a := &answersRun{run: r, opts: opts, fragments: eval.NewFragmentRecorder(), runners: map[string]*route.Runner{},
		prompt: answersPrompt()}
	// The route body `make eval` scores as `route`, searching Milvus with
	// the question embedded, as a turn does; its cache never hits and
	// keeps what each search returned, to score the citations.
	searcher := r.searcher(r.routeSettings(nil), r.tree, r.query)
	searcher.Cache = a.fragments
	for _, mode := range append(AnswerModes(), curveMode) {
		runner := &route.Runner{Chat: opts.Chat, Searcher: searcher, Prompt: a.prompt, Policy: podconfig.SearchAlways,
			Tokens: tokens, ContextTokens: opts.ContextTokens, AnswerReserve: opts.AnswerReserve,
			Grounding: answer.GroundingSettings{Policy: podconfig.GroundingAnnotate, Threshold: opts.Threshold,
				FallbackBelow: opts.FallbackBelow}}
		switch mode {
		case ModeStrip:
			runner.Grounding.Policy = podconfig.GroundingStrip
		case ModeFallback:
			runner.Grounding.Policy = podconfig.GroundingFallback
		case ModeExtractive, curveMode:
			runner.AnswerMode = podconfig.AnswerExtractive
		}
		a.runners[mode] = runner
	}
	return a, nil
}

// summarize is a turn for the JSON report.
func summarize(o eval.TurnOutcome, gold eval.Gold) TurnSummary {
	s := TurnSummary{Question: o.Question.ID, Mode: o.Mode, Answer: o.Shown, Cited: o.Cited, Error: o.Err, Sentences: o.Groundings,
		UnsupportedURL: eval.UnsupportedURLs(o.Shown, o.Allowed),
		TTFTMillis:     float64(max(o.TTFT, 0).Microseconds()) / 1000, TotalMillis: float64(o.Total.Microseconds()) / 1000}
	if c := o.Completed; c != nil {
		s.NotFound, s.GroundedRatio, s.AnswerReplaced, s.Withheld = c.NotFound, c.GroundedRatio, c.AnswerReplaced, c.Withheld
	}
	if s.GroundedRatio == nil {
		s.GroundedRatio = o.Checked
	}
	_, hits := eval.CitedHits(o, gold)
	s.GoldCited = hits > 0
	return s
}
