package route

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// ChatModel streams one chat call (model.Chat).
type ChatModel interface {
	Stream(ctx context.Context, messages []model.Message, tools []model.Tool, gen model.Generation, onDelta func(string) error) (model.Reply, error)
}

// Runner runs turns: the chat model gets ONE round of tools, then answers.
type Runner struct {
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
	Tokens        tokenize.Counter
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
	// Grounding is what the grounding check does with the model's answer
	// (grounding.go); its zero value annotates with the default threshold.
	Grounding GroundingSettings
	// AnswerMode is generative (the chat model writes the answer, the
	// default) or AnswerExtractive (the route quotes the fragments,
	// extractive.go).
	AnswerMode string
	// FlaggedFragments is what packing does with fragments ingestion
	// flagged as reading like instructions to a model: keep (also when
	// empty), drop or quarantine (untrusted.go).
	FlaggedFragments FlaggedPolicy
	// Logger, when set, hears each failed turn's full error under its id;
	// the client's error event carries only a code and a fixed message.
	Logger *slog.Logger
}

// TurnInput is one turn: the conversation so far (ending with the user's
// question) and who asks.
type TurnInput struct {
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

// turnState is the per-turn bookkeeping; it lives only as long as Run.
type turnState struct {
	emit     func(Event)
	usage    Usage
	timings  map[string]time.Duration
	cacheHit bool
	// rounds is how many agentic rounds ran.
	rounds int
	// gen is the client's sampling for the calls that may answer.
	gen model.Generation
	// groundedRatio is the grounding check's summary.
	groundedRatio *float64
	// withheld counts sentences the strip policy withheld, linksRemoved
	// the links the link guard removed; replaced says the fallback
	// replaced the answer.
	withheld, linksRemoved int
	replaced               bool
}

// Run plays one turn, emitting its events; the last is turn.completed or
// error.
func (r *Runner) Run(ctx context.Context, in TurnInput, emit func(Event)) {
	st := &turnState{emit: emit, timings: map[string]time.Duration{}, gen: in.Generation}
	start := time.Now()
	mode := string(r.Policy) // single-round turns report their search policy
	if r.Mode == podconfig.ModeAgentic {
		mode = string(podconfig.ModeAgentic)
	}
	emit(Event{Type: EventTurnStarted, Data: TurnStarted{TurnID: in.ID, ConversationID: in.ConversationID, Mode: mode}})
	run := r.run
	if r.Mode == podconfig.ModeAgentic {
		run = r.runAgentic
	}
	ctx, span := startSpan(ctx, "ragroute.turn", attribute.String("ragroute.turn_id", in.ID), attribute.String("ragroute.mode", mode),
		attribute.String("ragroute.conversation_id", in.ConversationID))
	notFound, err := run(ctx, in, st)
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
	st.timings["total"] = time.Since(start)
	emit(Event{Type: EventTurnCompleted, Data: TurnCompleted{Usage: st.usage, Timings: millis(st.timings), CacheHit: st.cacheHit, NotFound: notFound, Rounds: st.rounds,
		GroundedRatio: st.groundedRatio, Withheld: st.withheld, LinksRemoved: st.linksRemoved, AnswerReplaced: st.replaced}})
}

// run is decide → retrieve → answer.
func (r *Runner) run(ctx context.Context, in TurnInput, st *turnState) (notFound bool, err error) {
	intent := retrieval.ClassifyIntent(lastUserMessage(in.Messages))
	calls, err := r.decide(ctx, in.Messages, intent, st)
	if err != nil || len(calls) == 0 {
		return false, err // failed, or answered directly: the text already streamed
	}
	results, packing, err := r.retrieve(ctx, in, intent, calls, st)
	if err != nil {
		return false, err
	}
	if r.weak(calls, packing) {
		if calls, results, packing, err = r.reSearch(ctx, in, intent, calls, results, st); err != nil {
			return false, err
		}
	}
	if len(packing.Packed) == 0 {
		// Nothing to ground an answer on: say so honestly, never invent one.
		return true, st.delta(r.Prompt.NotFound)
	}
	return r.respond(ctx, in, intent, calls, results, packing, st)
}

// respond answers from what was packed: the chat model writes it, or, in
// extractive mode, the route quotes the fragments.
func (r *Runner) respond(ctx context.Context, in TurnInput, intent retrieval.Intent, calls []model.ToolCall, results []retrieval.Retrieval,
	packing Packing, st *turnState) (notFound bool, err error) {
	if r.AnswerMode == AnswerExtractive {
		return r.extract(ctx, lastUserMessage(in.Messages), intent, packing, nil, st)
	}
	notFound, replaced, err := r.answer(ctx, in.Messages, calls, results, packing, st)
	if err != nil || replaced == nil {
		return notFound, err
	}
	return r.extract(ctx, lastUserMessage(in.Messages), intent, packing, replaced.vectors, st)
}

// decide is the round's tool calls. The model is offered the tools and
// either calls them or answers directly (its text streams through, and no
// calls come back). With the always policy nothing is offered: the search
// runs on the question, condensed from the conversation when there is one.
func (r *Runner) decide(ctx context.Context, history []model.Message, intent retrieval.Intent, st *turnState) ([]model.ToolCall, error) {
	if r.Policy == podconfig.SearchAlways {
		query, err := r.condense(ctx, history, st)
		if err != nil {
			return nil, err
		}
		arguments, _ := json.Marshal(map[string]string{"query": query})
		return []model.ToolCall{{ID: "call_search", Name: searchToolName, Arguments: string(arguments)}}, nil
	}
	t := time.Now()
	messages := withSystem(systemPrompt(r.Prompt, intent), history)
	ctx, span := startSpan(ctx, "ragroute.model.decide")
	// A direct answer, too, renders no link the platform prompt lacks.
	links := allowedLinks{}
	links.addText(messages[0].Content)
	guard := newLinkGuard(links, st.delta)
	reply, err := r.Chat.Stream(ctx, messages, r.tools(), st.gen, guard.write)
	if err == nil {
		err = guard.flush()
	}
	endSpan(span, err)
	st.timings["model_decide"] = time.Since(t)
	st.add(reply.Usage)
	if err != nil {
		return nil, err
	}
	return reply.ToolCalls, nil
}

// retrieve runs the round's tool calls, up to the cap, and packs what
// they found, each fragment once, into what is left of the window; the
// retrieval events report it. The results are those of the calls run, the
// first ones of calls.
func (r *Runner) retrieve(ctx context.Context, in TurnInput, intent retrieval.Intent, calls []model.ToolCall, st *turnState) ([]retrieval.Retrieval, Packing, error) {
	results, err := r.runTools(ctx, calls, in.Principals, st)
	if err != nil {
		return nil, Packing{}, err
	}
	packing := r.pack(ctx, in, intent, uniqueFragments(results))
	r.emitRetrievals(results, packing, st)
	return results, packing, nil
}

// uniqueFragments are the fragments of results, each once, in order.
func uniqueFragments(results []retrieval.Retrieval) []retrieval.Fragment {
	var all []retrieval.Fragment
	seen := map[string]bool{}
	for _, res := range results {
		for _, f := range res.Fragments {
			if !seen[f.ID] {
				seen[f.ID] = true
				all = append(all, f)
			}
		}
	}
	return all
}

// pack lays fragments out for the answering call under the route's
// window and flagged-fragment policy.
func (r *Runner) pack(ctx context.Context, in TurnInput, intent retrieval.Intent, fragments []retrieval.Fragment) Packing {
	_, span := startSpan(ctx, "ragroute.pack")
	defer span.End()
	packing := packFragments(r.Prompt, r.FlaggedFragments, intent, in.Messages, fragments, r.ContextTokens, r.AnswerReserve, r.Tokens)
	span.SetAttributes(attribute.Int("ragroute.packed", len(packing.Packed)), attribute.Int("ragroute.dropped", len(packing.Dropped)))
	return packing
}

// answer is the answering call: the tool results appended (calls past
// the cap answered "not run"), no tools offered, fence markers the model
// echoes scrubbed from the stream, and the citations the answer used.
// When the grounding policy replaces the answer, replaced is the check's
// scorer, whose fragment vectors the extractive answer reuses.
func (r *Runner) answer(ctx context.Context, history []model.Message, calls []model.ToolCall, results []retrieval.Retrieval, packing Packing,
	st *turnState) (notFound bool, replaced *supportScorer, err error) {
	messages := withSystem(packing.System, history)
	messages = append(messages, model.Message{Role: model.RoleAssistant, ToolCalls: calls})
	for i, call := range calls {
		if i >= len(results) {
			// Past the round's cap: the protocol wants a result for every
			// call id, and the model must learn the call did not run.
			messages = append(messages, model.Message{Role: model.RoleTool, ToolCallID: call.ID, Content: notRunResult(len(results))})
			continue
		}
		ids := map[string]bool{}
		for _, f := range results[i].Fragments {
			ids[f.ID] = true
		}
		messages = append(messages, model.Message{Role: model.RoleTool, ToolCallID: call.ID, Content: packing.context(ids)})
	}
	t := time.Now()
	ctx, span := startSpan(ctx, "ragroute.model.answer", attribute.Int("ragroute.fragments", len(packing.Packed)))
	first := true
	var shown strings.Builder // the answer as the client reads it
	show := func(text string) error {
		if first {
			first = false
			span.AddEvent("first token")
			span.SetAttributes(attribute.Int64("ragroute.time_to_first_token_ms", time.Since(t).Milliseconds()))
		}
		shown.WriteString(text)
		return st.delta(text)
	}
	scorer := newSupportScorer(r.Searcher.Embedder, packing.Packed, r.Grounding.threshold())
	gate := newGroundingGate(ctx, r.Grounding.Policy, r.Prompt.NotFound, scorer, show, func(g Grounding) { st.emit(Event{Type: EventGrounding, Data: g}) })
	guard := newLinkGuard(packing.Links, gate.write)
	scrub := newFenceScrubber(packing.Fence, guard.write)
	reply, err := r.Chat.Stream(ctx, messages, nil, st.gen, scrub.write)
	st.timings["model_answer"] = time.Since(t)
	st.add(reply.Usage)
	if err == nil {
		err = scrub.flush()
	}
	if err == nil {
		err = guard.flush()
	}
	if err != nil {
		gate.abandon()
		endSpan(span, err)
		return false, nil, err
	}
	err = gate.finish()
	endSpan(span, err)
	st.linksRemoved = guard.removed
	if err != nil {
		return false, nil, err
	}
	if strings.TrimSpace(reply.Content) == "" {
		// A model that asks for tools again gets no second round; with no
		// text of its own, the honest answer is the not-found wording.
		return true, nil, st.delta(r.Prompt.NotFound)
	}
	if strings.TrimSpace(reply.Content) == strings.TrimSpace(r.Prompt.NotFound) {
		return true, nil, gate.release()
	}
	replace, err := r.settle(gate, packing, &shown, st)
	if replace {
		// The check embedded the fragments' sentences; the extractive
		// answer that replaces this one scores the same units.
		return false, scorer, err
	}
	return false, nil, err
}

// withSystem is the conversation under a system message.
func withSystem(system string, history []model.Message) []model.Message {
	return append([]model.Message{{Role: model.RoleSystem, Content: system}}, history...)
}

// condense turns the last question into a self-contained query when there
// is history to resolve; a first question is searched as asked.
func (r *Runner) condense(ctx context.Context, messages []model.Message, st *turnState) (string, error) {
	question := lastUserMessage(messages)
	if len(messages) <= 1 {
		return question, nil
	}
	var transcript strings.Builder
	for _, m := range messages {
		if m.Role == model.RoleUser || m.Role == model.RoleAssistant {
			fmt.Fprintf(&transcript, "%s: %s\n", m.Role, m.Content)
		}
	}
	return r.writeQuery(ctx, "condense", "Rewrite the user's last question as one self-contained search query. Reply with the query only.",
		transcript.String(), question, st)
}

// writeQuery asks the model for a search query in one short call without
// tools (stage names its span and timing); fallback when it gives none.
func (r *Runner) writeQuery(ctx context.Context, stage, system, user, fallback string, st *turnState) (string, error) {
	if r.Chat == nil {
		return fallback, nil // a route without a model searches as asked
	}
	t := time.Now()
	ctx, span := startSpan(ctx, "ragroute.model."+stage)
	reply, err := r.Chat.Stream(ctx, []model.Message{
		{Role: model.RoleSystem, Content: system},
		{Role: model.RoleUser, Content: user},
	}, nil, model.Generation{}, nil)
	endSpan(span, err)
	st.timings[stage] = time.Since(t)
	st.add(reply.Usage)
	if err != nil {
		return "", err
	}
	if q := queryOf(reply.Content); q != "" {
		return q, nil
	}
	return fallback, nil
}

// maxWrittenQuery bounds a query the model wrote: a small model may write
// a paragraph where one line was asked for.
const maxWrittenQuery = 300

// queryOf is the first non-empty line of a model's reply, unquoted and cut
// to maxWrittenQuery bytes at a word boundary.
func queryOf(reply string) string {
	for _, line := range strings.Split(reply, "\n") {
		q := strings.Trim(strings.TrimSpace(line), "\"'`")
		if q == "" {
			continue
		}
		if len(q) > maxWrittenQuery {
			q = q[:maxWrittenQuery]
			if i := strings.LastIndexByte(q, ' '); i > 0 {
				q = q[:i]
			}
			q = strings.ToValidUTF8(q, "")
		}
		return q
	}
	return ""
}

// emitRetrievals reports each search: the fragments of it that were
// packed, under their markers, and what the budget dropped.
func (r *Runner) emitRetrievals(results []retrieval.Retrieval, packing Packing, st *turnState) {
	markers := map[string]retrieval.Fragment{}
	for _, f := range packing.Packed {
		markers[f.ID] = f
	}
	for _, res := range results {
		ev := RetrievalReport{Query: res.Query, Intent: res.Intent, CacheHit: res.CacheHit, Dropped: packing.Dropped}
		for _, f := range res.Fragments {
			packed, ok := markers[f.ID]
			if !ok {
				continue
			}
			ev.Sources = append(ev.Sources, RetrievalSource{Marker: packed.Marker, Title: f.Title, HeadingPath: f.HeadingPath,
				SourceURI: f.SourceURI, ImageURLs: f.ImageURLs, Score: f.Score, Kind: f.Kind, Reassembled: f.Reassembled})
		}
		st.emit(Event{Type: EventRetrieval, Data: ev})
	}
}

// delta streams a piece of the answer.
func (st *turnState) delta(text string) error {
	st.emit(Event{Type: EventDelta, Data: Delta{Text: text}})
	return nil
}

func (st *turnState) add(u model.Usage) {
	st.usage.PromptTokens += u.PromptTokens
	st.usage.CompletionTokens += u.CompletionTokens
}

func lastUserMessage(messages []model.Message) string {
	for i := len(messages) - 1; i >= 0; i-- {
		if messages[i].Role == model.RoleUser {
			return messages[i].Content
		}
	}
	return ""
}
