package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// Agentic evaluation (`make eval-agentic`): each question of a multi-part
// set (eval.LoadMultiPart) runs as a whole turn through the route's
// turn.Engine in single-round mode and in agentic mode, over the store and
// route body `make eval-answers` uses; the turns' events are scored for
// the parts the answer's fragments hold, grounding, rounds, searches,
// model calls and time (agentic_score.go).

// AgenticOptions say what to run, with what. Options are the retrieval
// evaluation's (corpus, store, embedder, vector cache, floors); Questions
// names a multi-part set.
type AgenticOptions struct {
	Options
	Chat      turn.ChatModel
	ChatModel string
	// Modes to run (AgenticModes when empty).
	Modes []string
	// Limit keeps the first Limit questions (0: all).
	Limit int
	// Turns is how many turns run at once (1 when 0).
	Turns int
	// TurnTimeout bounds one turn (5 minutes when 0: an agentic turn may
	// make dozens of model calls).
	TurnTimeout time.Duration
}

// AgenticReport is what an agentic evaluation found.
type AgenticReport struct {
	// Route names the route evaluated; Deviations are the settings the
	// evaluation changed from it as shipped.
	Route         string   `json:"route"`
	Deviations    []string `json:"deviations"`
	Model         string   `json:"model"`
	Questions     int      `json:"questions"`
	MultiPart     int      `json:"multi_part"`
	Controls      int      `json:"single_part_controls"`
	ContextTokens int      `json:"context_tokens"`
	AnswerReserve int      `json:"answer_reserve_tokens"`
	Policy        string   `json:"search_policy"`
	MaxFragments  int      `json:"max_fragments"`
	// Reranker names the cross-encoder and its depth; empty: none.
	Reranker string               `json:"reranker,omitempty"`
	Modes    []AgenticModeFigures `json:"modes"`
	Turns    []AgenticTurnSummary `json:"turns"`
	Seconds  float64              `json:"seconds"`
}

// AgenticTurnSummary is one turn as the JSON report keeps it.
type AgenticTurnSummary struct {
	Question      string   `json:"question"`
	Mode          string   `json:"mode"`
	MultiPart     bool     `json:"multi_part"`
	PartsFound    []bool   `json:"parts_found"`
	Final         []string `json:"final_fragments"`
	Queries       []string `json:"queries"`
	Rounds        int      `json:"rounds"`
	ModelCalls    int      `json:"model_calls"`
	Forced        bool     `json:"finalize_forced,omitempty"`
	Answer        string   `json:"answer"`
	NotFound      bool     `json:"not_found"`
	GroundedRatio *float64 `json:"grounded_ratio,omitempty"`
	TotalMillis   float64  `json:"total_ms"`
	Error         string   `json:"error,omitempty"`
}

// RunAgentic ingests the corpus as `make eval` does and runs every
// question as a turn in each mode.
func RunAgentic(ctx context.Context, opts AgenticOptions) (AgenticReport, error) {
	began := time.Now()
	opts = agenticDefaults(opts)
	for _, m := range opts.Modes {
		if !slices.Contains(AgenticModes(), m) {
			return AgenticReport{}, fmt.Errorf("agentic evaluation: unknown mode %q (want %s)", m, strings.Join(AgenticModes(), ", "))
		}
	}
	if opts.Chat == nil {
		return AgenticReport{}, fmt.Errorf("agentic evaluation: a chat model is needed")
	}
	var questions []eval.MultiQuestion
	for _, path := range opts.Questions {
		qs, err := eval.LoadMultiPart(path)
		if err != nil {
			return AgenticReport{}, err
		}
		questions = append(questions, qs...)
	}
	if opts.Limit > 0 && opts.Limit < len(questions) {
		questions = questions[:opts.Limit]
	}
	r, err := prepareQuestions(ctx, opts.Options, eval.PartQuestions(questions))
	if err != nil {
		return AgenticReport{}, err
	}
	a, err := newAgenticRun(r, questions, opts)
	if err != nil {
		return AgenticReport{}, err
	}
	cfg := opts.Route
	report := AgenticReport{Route: routeName(cfg), Deviations: opts.Deviations, Model: opts.ChatModel, Questions: len(questions),
		ContextTokens: int(cfg.Window.ContextTokens), AnswerReserve: int(cfg.Window.AnswerReserveTokens),
		Policy: string(cfg.Model.SearchPolicy), MaxFragments: int(cfg.Retrieval.MaxFragments)}
	if ce := cfg.Rerank.CrossEncoder; cfg.Rerank.Mode == podconfig.RerankCrossEncoder && ce != nil {
		report.Reranker = fmt.Sprintf("%s, top %d", ce.Model, ce.TopN)
	}
	for _, q := range questions {
		if q.MultiPart() {
			report.MultiPart++
		} else {
			report.Controls++
		}
	}
	turns, err := a.runAll(ctx)
	if err != nil {
		return report, err
	}
	for _, mode := range opts.Modes {
		found := make([][]bool, len(turns[mode]))
		for i, t := range turns[mode] {
			found[i] = partsFound(t, r.gold, a.resolve)
			report.Turns = append(report.Turns, summarizeAgentic(t, found[i]))
		}
		report.Modes = append(report.Modes, modeFigures(mode, turns[mode], found))
	}
	report.Seconds = time.Since(began).Seconds()
	return report, nil
}

func agenticDefaults(opts AgenticOptions) AgenticOptions {
	if len(opts.Modes) == 0 {
		opts.Modes = AgenticModes()
	}
	if opts.Turns <= 0 {
		opts.Turns = 1
	}
	if opts.TurnTimeout <= 0 {
		opts.TurnTimeout = 5 * time.Minute
	}
	return opts
}

// agenticRun is one agentic evaluation's shared state.
type agenticRun struct {
	*run
	opts      AgenticOptions
	questions []eval.MultiQuestion
	fragments *eval.FragmentRecorder
	runners   map[string]*turn.Engine
}

func newAgenticRun(r *run, questions []eval.MultiQuestion, opts AgenticOptions) (*agenticRun, error) {
	a := &agenticRun{run: r, opts: opts, questions: questions, fragments: eval.NewFragmentRecorder(), runners: map[string]*turn.Engine{}}
	// As eval-answers: the route's search body searching Milvus, its cache
	// keeping each fragment returned so reported fragments are scored by
	// text; the model's calls counted per turn. The modes' turns share the
	// searcher's embedder client with their checks, as one replica's do.
	parts := r.parts(r.tree, r.query, a.fragments)
	parts.Chat = countingChat{opts.Chat}
	searcher := assembly.NewSearcher(opts.Route, parts)
	for _, mode := range AgenticModes() {
		cfg := opts.Route
		cfg.Mode = podconfig.Mode(mode)
		runner, err := assembly.NewEngine(cfg, searcher, parts)
		if err != nil {
			return nil, err
		}
		a.runners[mode] = runner
	}
	return a, nil
}

// resolve is a reported fragment's text, from what the searches returned.
func (a *agenticRun) resolve(s turn.RetrievalSource) (eval.Unit, bool) {
	f, ok := a.fragments.Packed(s)
	return eval.Unit{Source: f.Source, Text: f.Text, HeadingPath: f.HeadingPath}, ok
}

// runAll runs every question in every mode, question by question, so a
// cut-short run still covers each mode.
func (a *agenticRun) runAll(ctx context.Context) (map[string][]agenticTurn, error) {
	out := map[string][]agenticTurn{}
	for _, m := range a.opts.Modes {
		out[m] = make([]agenticTurn, len(a.questions))
	}
	var mu sync.Mutex
	var done atomic.Int64
	total := len(a.opts.Modes) * len(a.questions)
	sem := make(chan struct{}, a.opts.Turns)
	var wg sync.WaitGroup
	for i, q := range a.questions {
		for _, mode := range a.opts.Modes {
			if ctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				t := a.runTurn(ctx, mode, q)
				mu.Lock()
				out[mode][i] = t
				mu.Unlock()
				logf(a.opts.Progress, "[%d/%d] %s %-11s %s\n", done.Add(1), total, q.ID, mode, agenticBrief(t))
			}()
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("agentic evaluation: %w", err)
	}
	return out, nil
}

// runTurn runs one question as a first turn; a failed turn is an
// outcome, not an error.
func (a *agenticRun) runTurn(ctx context.Context, mode string, q eval.MultiQuestion) agenticTurn {
	calls := new(atomic.Int64)
	timed, total := playFirstTurn(context.WithValue(ctx, modelCallsKey{}, calls), a.runners[mode], q.ID+"-"+mode, q.Question, a.opts.TurnTimeout)
	events := make([]turn.Event, len(timed))
	for i, e := range timed {
		events[i] = e.Event
	}
	return digestAgentic(q, mode, events, int(calls.Load()), total)
}

// modelCallsKey holds a turn's model call counter in its context: the
// runners are shared by turns that run at once.
type modelCallsKey struct{}

// countingChat counts the chat calls of the turn whose context it is
// called with; the route's events say nothing of its model calls.
type countingChat struct{ turn.ChatModel }

func (c countingChat) Stream(ctx context.Context, messages []model.Message, tools []model.Tool, gen model.Generation,
	onDelta func(string) error) (model.Reply, error) {
	if n, ok := ctx.Value(modelCallsKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
	return c.ChatModel.Stream(ctx, messages, tools, gen, onDelta)
}

// agenticBrief is a turn's progress line.
func agenticBrief(t agenticTurn) string {
	if t.Completed == nil {
		return "failed: " + t.Err
	}
	return fmt.Sprintf("%5.1f s  %d rounds, %d searches, %d model calls, %d fragments, not found %v",
		t.Total.Seconds(), t.Rounds, len(t.Queries), t.ModelCalls, len(t.Final), t.Completed.NotFound)
}

// summarizeAgentic is a turn for the JSON report.
func summarizeAgentic(t agenticTurn, found []bool) AgenticTurnSummary {
	s := AgenticTurnSummary{Question: t.Question.ID, Mode: t.Mode, MultiPart: t.Question.MultiPart(), PartsFound: found,
		Queries: t.Queries, Rounds: t.Rounds, ModelCalls: t.ModelCalls, Forced: t.Forced, Answer: t.Shown, Error: t.Err,
		TotalMillis: float64(t.Total.Microseconds()) / 1000}
	for _, f := range t.Final {
		s.Final = append(s.Final, f.Marker+" "+f.SourceURI+" › "+strings.Join(f.HeadingPath, " › "))
	}
	if c := t.Completed; c != nil {
		s.NotFound, s.GroundedRatio = c.NotFound, c.GroundedRatio
	}
	return s
}
