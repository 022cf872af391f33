package turn

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// ChatModel streams one chat call (model.Chat).
type ChatModel interface {
	Stream(ctx context.Context, messages []model.Message, tools []model.Tool, gen model.Generation, onDelta func(string) error) (model.Reply, error)
}

// Engine runs turns: the chat model gets ONE round of tools, then answers.
type Engine struct {
	// Chat is the chat model; nil only for a route without one (extractive
	// answers, searchPolicy always).
	Chat     ChatModel
	Searcher *retrieval.Searcher
	// WebSearch, when set, is offered as web_search next to search_knowledge.
	WebSearch     *retrieval.WebSearch
	Prompt        Prompt
	Policy        podconfig.SearchPolicy
	ContextTokens int
	AnswerReserve int
	// AnswerMaxTokens is the route's model.maxTokens: it caps the answer,
	// the extractive one too (0: the answer reserve alone).
	AnswerMaxTokens int
	Tokens          tokenize.Counter
	// MaxToolCallsPerRound caps the tool calls run from the model's one
	// round (0: DefaultMaxToolCallsPerRound). The first ones run, at most
	// ToolCallParallelism at once; each call past the cap is answered
	// "not run" so the model can still answer. A reply of hundreds of
	// calls would otherwise be hundreds of concurrent searches.
	MaxToolCallsPerRound int
	// Research allows one rephrased search before a single-round turn
	// answers not found (research.go); ResearchBelow, when set, also
	// re-searches when the best fragment found scores below it.
	Research      bool
	ResearchBelow *float64
	// Mode is singleRound (one round of tools, the default) or agentic
	// (the multi-round research harness, agentic.go).
	Mode podconfig.Mode
	// ToolProtocol is how an agentic turn gets the model's tool calls
	// (agentic_protocol.go); empty is auto.
	ToolProtocol podconfig.ToolProtocol
	// Grounding is what the grounding check does with the model's answer
	// (route/answer's Gate); its zero value annotates with the default
	// threshold.
	Grounding answer.GroundingSettings
	// Check is the grounding check's embedders (a cache of the fragments'
	// units, a client of their own that never holds up a query's
	// embedding) and how long annotate waits for it; the zero value checks
	// with Searcher.Embedder, uncached (checker).
	Check answer.Checker
	// Answerability, when set, decides before the answer whether what was
	// packed answers the question (answerable.go): by the question's
	// coverage, or by asking the model (generative answers only); nil:
	// the answer is written from whatever was packed.
	Answerability *Answerability
	// AnswerMode is generative (the chat model writes the answer, also
	// when empty) or extractive (the route quotes the fragments:
	// route/answer's Quoter).
	AnswerMode podconfig.AnswerMode
	// FlaggedFragments is what packing does with fragments ingestion
	// flagged as reading like instructions to a model: keep (also when
	// empty), drop or quarantine (untrusted.go).
	FlaggedFragments podconfig.FlaggedPolicy
	// Logger, when set, hears each failed turn's full error under its id;
	// the client's error event carries only a code and a fixed message.
	Logger *slog.Logger
}

// Input is one turn: the conversation so far (ending with the user's
// question) and who asks.
type Input struct {
	ID string
	// ConversationID is the client's name for the conversation the turn
	// belongs to ("" when it gave none); turn.started and the turn's span
	// carry it, so the turns of one conversation can be found together.
	ConversationID string
	Messages       []model.Message
	Principals     []string
	// Generation is what the client asked of the answer's sampling (the
	// OpenAI facade's max_tokens, temperature, stop); it lowers the
	// route's settings, never raises them.
	Generation model.Generation
}

// Run plays one turn, emitting its events; the last is turn.completed or
// error.
func (r *Engine) Run(ctx context.Context, in Input, emit func(Event)) {
	st := newTurnState(emit, in.Generation, r.Prompt.forQuestion(lastUserMessage(in.Messages)))
	start := time.Now()
	mode := string(r.Policy) // single-round turns report their search policy
	if r.Mode == podconfig.ModeAgentic {
		mode = string(podconfig.ModeAgentic)
	}
	emit(Event{Type: EventTurnStarted, Data: Started{TurnID: in.ID, ConversationID: in.ConversationID, Mode: mode}})
	run := r.run
	if r.Mode == podconfig.ModeAgentic {
		run = r.runAgentic
	}
	ctx, span := startSpan(ctx, "ragroute.turn", attribute.String("ragroute.turn_id", in.ID), attribute.String("ragroute.mode", mode),
		attribute.String("ragroute.conversation_id", in.ConversationID))
	notFound, err := r.guarded(ctx, in, st, run)
	span.SetAttributes(attribute.Bool("ragroute.not_found", notFound))
	endSpan(span, err)
	if err != nil {
		ev := turnError(ctx, in.ID, err)
		if r.Logger != nil {
			r.Logger.Error("turn failed", "turn", in.ID, "code", ev.Code, "error", err)
		}
		emit(Event{Type: EventError, Data: ev})
		return
	}
	st.took("total", time.Since(start))
	emit(Event{Type: EventTurnCompleted, Data: st.completed(notFound)})
}

// guarded plays run, a panic in it becoming the turn's error: a turn runs
// in a goroutine of its own, and a panic there would end the replica and
// every other user's turn with it.
func (r *Engine) guarded(ctx context.Context, in Input, st *turnState,
	run func(context.Context, Input, *turnState) (bool, error)) (notFound bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the turn panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return run(ctx, in, st)
}

// run is decide → retrieve → answer.
func (r *Engine) run(ctx context.Context, in Input, st *turnState) (notFound bool, err error) {
	intent := retrieval.ClassifyIntent(lastUserMessage(in.Messages))
	// The conversation goes with the decide call's system prompt and tools.
	in = r.trimHistory(in, r.Tokens.Count(systemPrompt(st.prompt, intent))+4+r.toolsTokens(r.tools()), st)
	calls, err := r.decide(ctx, in.Messages, intent, st)
	if err != nil || len(calls) == 0 {
		return false, err // failed, or answered directly: the text already streamed
	}
	results, packing, err := r.retrieve(ctx, in, intent, calls, st)
	if err != nil {
		return false, err
	}
	if r.weak(calls, packing) {
		if calls, results, packing, err = r.reSearch(ctx, in, intent, calls, results, packing, st); err != nil {
			return false, err
		}
	}
	if len(packing.Packed) == 0 {
		// Nothing to ground an answer on: say so honestly, never invent one.
		return st.notFound()
	}
	return r.respond(ctx, in, intent, calls, results, packing, st)
}

// respond answers from what was packed: the chat model writes it, or, in
// extractive mode or when the grounding policy replaces the model's
// answer, the route quotes the fragments.
func (r *Engine) respond(ctx context.Context, in Input, intent retrieval.Intent, calls []model.ToolCall, results []retrieval.Retrieval,
	packing Packing, st *turnState) (notFound bool, err error) {
	question := lastUserMessage(in.Messages)
	answerable, err := r.answerable(ctx, in, calls, results, packing, st)
	if err != nil {
		return false, err
	}
	if !answerable {
		return st.notFound()
	}
	if r.AnswerMode == podconfig.AnswerExtractive {
		return r.extract(ctx, question, intent, packing, nil, st)
	}
	out, err := r.generate(ctx, in.Messages, calls, results, packing, st)
	if err != nil || !out.replaced {
		return out.notFound, err
	}
	return r.extract(ctx, question, intent, packing, out.unitVectors, st)
}

// retrieve runs the round's tool calls, up to the cap, and packs what
// they found (mergeFragments), into what is left of the window; the
// retrieval events report it. The results are those of the calls run, the
// first ones of calls.
func (r *Engine) retrieve(ctx context.Context, in Input, intent retrieval.Intent, calls []model.ToolCall, st *turnState) ([]retrieval.Retrieval, Packing, error) {
	results, err := r.runTools(ctx, calls, in.Principals, st)
	if err != nil {
		return nil, Packing{}, err
	}
	packing := r.pack(ctx, in, st.prompt, intent, calls, results, nil)
	r.emitRetrievals(results, packing, st)
	return results, packing, nil
}

// pack lays the searches' fragments out for the answering call, at most
// retrieval.maxFragments of them, under the route's flagged-fragment
// policy, into what the answering call leaves of the prompt's room: its
// system prompt, the conversation, the round's calls and the framing of
// their results (and the parts an agentic research left open) counted as
// they will be sent.
func (r *Engine) pack(ctx context.Context, in Input, prompt Prompt, intent retrieval.Intent, calls []model.ToolCall, results []retrieval.Retrieval,
	open []string) Packing {
	_, span := startSpan(ctx, "ragroute.pack")
	defer span.End()
	fragments, capped := mergeFragments(results, r.Searcher.Settings.MaxFragments)
	packing := newPacking(prompt, intent)
	packing.Open, packing.Capped = open, capped
	// Less 8: fenced blocks joined count a token or so more than apart.
	packing.Budget = r.promptTokens() - r.messageTokens(answerMessages(in.Messages, calls, results, packing)) - 8
	packing = packFragments(packing, r.FlaggedFragments, fragments, r.Tokens)
	span.SetAttributes(attribute.Int("ragroute.packed", len(packing.Packed)), attribute.Int("ragroute.dropped", len(packing.Dropped)),
		attribute.Int("ragroute.capped", len(capped)))
	return packing
}

// emitRetrievals reports each search: the fragments of it that were
// packed, under their markers, and what the budget dropped.
func (r *Engine) emitRetrievals(results []retrieval.Retrieval, packing Packing, st *turnState) {
	markers := map[string]retrieval.Fragment{}
	for _, f := range packing.Packed {
		markers[f.ID] = f
	}
	for _, res := range results {
		ev := RetrievalReport{Query: res.Query, Intent: res.Intent, CacheHit: res.CacheHit, Dropped: packing.Dropped,
			HistoryTrimmed: st.historyTrimmed}
		for _, f := range res.Fragments {
			if packing.Capped[f.ID] {
				ev.Capped++
			}
			packed, ok := markers[f.ID]
			if !ok {
				continue
			}
			ev.Sources = append(ev.Sources, RetrievalSource{Marker: packed.Marker, Title: f.Title, HeadingPath: f.HeadingPath,
				SourceURI: f.SourceURI, ImageURLs: f.ImageURLs, Score: f.Score, Similarity: f.Similarity, Kind: f.Kind, Reassembled: f.Reassembled})
		}
		st.emit(Event{Type: EventRetrieval, Data: ev})
	}
}
