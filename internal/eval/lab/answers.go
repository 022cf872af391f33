package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// Answer-level evaluation (`make eval-answers`): each question runs as a
// whole turn through the route's own turn code (turn.Engine) with a real
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

// AnswersOptions say what to run, with what. Options are the retrieval
// evaluation's (corpus, questions, store, embedder, vector cache, floors).
type AnswersOptions struct {
	Options
	// Chat is the chat model; ChatModel names it in the report.
	Chat      turn.ChatModel
	ChatModel string
	// Judge, when set, is the judge model (the route's answer.judge):
	// the turns' checks ask it, and the support labels are also scored
	// with the grounding judge; JudgeModel names it in the report.
	Judge      turn.ChatModel
	JudgeModel string
	// Modes to run (AnswerModes when empty; none with CurveOnly).
	Modes []string
	// Limit keeps the first Limit questions (0: all).
	Limit int
	// Turns is how many turns run at once (1 when 0).
	Turns int
	// TurnTimeout bounds one turn (2 minutes when 0).
	TurnTimeout time.Duration
	// Curve also scores the synthetic sentence sets (GroundingCurve);
	// CurveOnly runs no turns with the chat model.
	Curve, CurveOnly bool
	// SupportLabels, a folder of labelled answer sentences
	// (test/eval/support), also scores the route's support judge against
	// them; SupportOnly runs no turns.
	SupportLabels string
	SupportOnly   bool
}

// AnswersReport is what an answer-level evaluation found.
type AnswersReport struct {
	// Route names the route evaluated; Deviations are the settings the
	// evaluation changed from it as shipped.
	Route         string             `json:"route"`
	Deviations    []string           `json:"deviations"`
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
	// Support is the support judges' agreement with the labelled
	// sentences, when asked for.
	Support []Agreement `json:"support_judges,omitempty"`
	// Answerability is the answerability check's curve, when its turns
	// asked.
	Answerability *AnswerabilityCurve `json:"answerability,omitempty"`
	// AnswerabilityRules are the check's rules replayed over the same
	// mode's turns (answers_rules.go).
	AnswerabilityRules []RuleFigures `json:"answerability_rules,omitempty"`
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
	Sentences []answer.Grounding `json:"sentences,omitempty"`
	// Answerable is the answerability check's score, when it ran, and
	// Check its whole report: every signal it read (coverage and the
	// words missing, the names missing, the best packed fragment's
	// relevance) and which rules refused.
	Answerable *float64                  `json:"answerability,omitempty"`
	Check      *turn.AnswerabilityReport `json:"answerability_check,omitempty"`
	// PackedRelevance is each packed fragment's score (the cross-encoder's
	// relevance when the route reranks with one), in marker order.
	PackedRelevance []float64 `json:"packed_relevance,omitempty"`
	// GoldPacked: an answerable question's gold section was packed (nil
	// for an unanswerable one); ModelNotFound: the model answered with the
	// not-found wording; Researched: the turn searched once more.
	GoldPacked    *bool `json:"gold_packed,omitempty"`
	ModelNotFound bool  `json:"model_not_found"`
	Researched    bool  `json:"researched,omitempty"`
	// Fragments are the packed fragments by marker, as the model read
	// them (labeling the answer's sentences needs them).
	Fragments   map[string]eval.Unit `json:"fragments,omitempty"`
	TTFTMillis  float64              `json:"ttft_ms"`
	TotalMillis float64              `json:"total_ms"`
	Error       string               `json:"error,omitempty"`
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
	route := opts.Route
	report := AnswersReport{Route: routeName(route), Deviations: opts.Deviations, Model: opts.ChatModel, Questions: len(r.questions),
		ContextTokens: int(route.Window.ContextTokens), AnswerReserve: int(route.Window.AnswerReserveTokens),
		Threshold: route.Answer.Grounding.SupportThreshold, FallbackBelow: route.Answer.Grounding.FallbackBelow}
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
			report.Histogram = scoreHistogram(outcomes[mode], route.Answer.Grounding.SupportThreshold)
			report.Ratios = eval.RatioHistogram(outcomes[mode], r.gold)
			break
		}
	}
	for _, mode := range opts.Modes {
		if report.Answerability = answerabilityCurve(mode, outcomes[mode], r.questions); report.Answerability != nil {
			report.AnswerabilityRules = answerabilityRuleFigures(outcomes[mode], r.questions)
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
	if opts.SupportLabels != "" {
		if report.Support, err = a.supportAgreement(ctx); err != nil {
			return report, err
		}
	}
	report.Seconds = time.Since(began).Seconds()
	return report, nil
}

func answersDefaults(opts AnswersOptions) AnswersOptions {
	if opts.Modes == nil && !opts.CurveOnly && !opts.SupportOnly {
		opts.Modes = AnswerModes()
	}
	if opts.CurveOnly {
		opts.Modes, opts.Curve = nil, true
	}
	if opts.SupportOnly {
		opts.Modes, opts.Curve = nil, false
	}
	if opts.Turns <= 0 {
		opts.Turns = 1
	}
	if opts.TurnTimeout <= 0 {
		opts.TurnTimeout = 2 * time.Minute
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
	runners   map[string]*turn.Engine
	prompt    turn.Prompt
}

func newAnswersRun(r *run, opts AnswersOptions) (*answersRun, error) {
	cfg := opts.Route
	a := &answersRun{run: r, opts: opts, fragments: eval.NewFragmentRecorder(), runners: map[string]*turn.Engine{},
		prompt: turn.Prompt{Platform: cfg.Prompt.Platform, NotFound: cfg.Prompt.NotFound, Styles: cfg.Prompt.Styles}}
	// The route's search body searching Milvus with the question embedded,
	// as a turn does; its cache never hits and keeps what each search
	// returned, to score the citations. r.query is the embedder's client,
	// which the assembly shares between the questions and every mode's
	// grounding check, as in a pod.
	parts := r.parts(r.tree, r.query, a.fragments)
	if opts.Chat != nil {
		parts.Chat = opts.Chat
	}
	if opts.Judge != nil {
		parts.Judge = opts.Judge
	}
	searcher := assembly.NewSearcher(cfg, parts)
	for _, mode := range append(AnswerModes(), curveMode) {
		modeCfg := cfg
		modeCfg.Answer.Mode = podconfig.AnswerGenerative
		switch mode {
		case ModeGenerative:
			modeCfg.Answer.Grounding.Policy = podconfig.GroundingAnnotate
		case ModeStrip:
			modeCfg.Answer.Grounding.Policy = podconfig.GroundingStrip
		case ModeFallback:
			modeCfg.Answer.Grounding.Policy = podconfig.GroundingFallback
		case ModeExtractive, curveMode:
			modeCfg.Answer.Mode = podconfig.AnswerExtractive
		}
		runner, err := assembly.NewEngine(modeCfg, searcher, parts)
		if err != nil {
			return nil, err
		}
		a.runners[mode] = runner
	}
	return a, nil
}

// summarize is a turn for the JSON report.
func summarize(o eval.TurnOutcome, gold eval.Gold) TurnSummary {
	s := TurnSummary{Question: o.Question.ID, Mode: o.Mode, Answer: o.Shown, Cited: o.Cited, Error: o.Err, Sentences: o.Groundings,
		UnsupportedURL: eval.UnsupportedURLs(o.Shown, o.Allowed), Fragments: o.Units,
		TTFTMillis: float64(max(o.TTFT, 0).Microseconds()) / 1000, TotalMillis: float64(o.Total.Microseconds()) / 1000}
	if c := o.Completed; c != nil {
		s.NotFound, s.GroundedRatio, s.AnswerReplaced, s.Withheld = c.NotFound, c.GroundedRatio, c.AnswerReplaced, c.Withheld
	}
	if s.GroundedRatio == nil {
		s.GroundedRatio = o.Checked
	}
	if a := o.Answerability; a != nil {
		s.Answerable, s.Check = &a.Score, a
	}
	for i := 1; i <= len(o.Sources); i++ {
		if src, ok := o.Sources[fmt.Sprintf("S%d", i)]; ok {
			s.PackedRelevance = append(s.PackedRelevance, src.Score)
		}
	}
	if o.Question.Answerable() {
		packed := eval.GoldPacked(o, gold)
		s.GoldPacked = &packed
	}
	s.ModelNotFound, s.Researched = len(o.Refusals) > 0, o.Researched
	_, hits := eval.CitedHits(o, gold)
	s.GoldCited = hits > 0
	return s
}
