package route

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// ChatModel streams one chat call (model.Chat).
type ChatModel interface {
	Stream(ctx context.Context, messages []model.Message, tools []model.Tool, onDelta func(string) error) (model.Reply, error)
}

const searchToolName = "search_knowledge"

var searchTool = toolSpec(searchToolName, "Search the organisation's documentation. Call it for any question the documentation may answer. "+
	"Write a self-contained query: resolve pronouns and references to earlier messages.")

// toolSpec is a tool taking one self-contained query.
func toolSpec(name, description string) model.Tool {
	return model.Tool{Name: name, Description: description, Parameters: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "the self-contained search query"},
		},
		"required": []string{"query"},
	}}
}

// Runner runs turns: the chat model gets ONE round of tools, then answers.
type Runner struct {
	Chat     ChatModel
	Searcher *Searcher
	// WebSearch, when set, is offered as web_search next to search_knowledge.
	WebSearch     *WebSearch
	Prompt        Prompt
	Policy        podconfig.SearchPolicy
	ContextTokens int
	AnswerReserve int
	Tokens        tokenize.Counter
}

// TurnInput is one turn: the conversation so far (ending with the user's
// question) and who asks.
type TurnInput struct {
	ID         string
	Messages   []model.Message
	Principals []string
}

// turnState is the per-turn bookkeeping; it lives only as long as Run.
type turnState struct {
	emit     func(Event)
	usage    usage
	timings  map[string]time.Duration
	cacheHit bool
}

// Run plays one turn, emitting its events; the last is turn.completed or
// error.
func (r *Runner) Run(ctx context.Context, in TurnInput, emit func(Event)) {
	st := &turnState{emit: emit, timings: map[string]time.Duration{}}
	start := time.Now()
	emit(Event{Type: EventTurnStarted, Data: turnStarted{TurnID: in.ID, Mode: string(r.Policy)}})
	notFound, err := r.run(ctx, in, st)
	if err != nil {
		code := "internal"
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			code = "timeout"
		case errors.Is(err, context.Canceled):
			code = "cancelled" // e.g. the replica is shutting down
		}
		emit(Event{Type: EventError, Data: turnError{Code: code, Message: err.Error()}})
		return
	}
	st.timings["total"] = time.Since(start)
	emit(Event{Type: EventTurnCompleted, Data: turnCompleted{Usage: st.usage, Timings: millis(st.timings), CacheHit: st.cacheHit, NotFound: notFound}})
}

func (r *Runner) run(ctx context.Context, in TurnInput, st *turnState) (notFound bool, err error) {
	intent := ClassifyIntent(lastUserMessage(in.Messages))
	system := model.Message{Role: model.RoleSystem, Content: systemPrompt(r.Prompt, intent)}
	messages := append([]model.Message{system}, in.Messages...)
	onDelta := func(text string) error {
		st.emit(Event{Type: EventDelta, Data: delta{Text: text}})
		return nil
	}

	var calls []model.ToolCall
	if r.Policy == podconfig.SearchAlways {
		query, err := r.condense(ctx, in.Messages, st)
		if err != nil {
			return false, err
		}
		arguments, _ := json.Marshal(map[string]string{"query": query})
		calls = []model.ToolCall{{ID: "call_search", Name: searchToolName, Arguments: string(arguments)}}
	} else {
		t := time.Now()
		tools := []model.Tool{searchTool}
		if r.WebSearch != nil {
			tools = append(tools, webSearchTool)
		}
		reply, err := r.Chat.Stream(ctx, messages, tools, onDelta)
		st.timings["model_decide"] = time.Since(t)
		st.add(reply.Usage)
		if err != nil {
			return false, err
		}
		if len(reply.ToolCalls) == 0 {
			return false, nil // answered directly; the text already streamed
		}
		calls = reply.ToolCalls
	}

	results, err := r.runTools(ctx, calls, in.Principals, st)
	if err != nil {
		return false, err
	}
	var all []Fragment
	seen := map[string]bool{}
	for _, res := range results {
		for _, f := range res.Fragments {
			if !seen[f.ID] {
				seen[f.ID] = true
				all = append(all, f)
			}
		}
	}
	packing := pack(r.Prompt, intent, in.Messages, all, r.ContextTokens, r.AnswerReserve, r.Tokens)
	r.emitRetrievals(results, packing, st)
	if len(packing.Packed) == 0 {
		// Nothing to ground an answer on: say so honestly, never invent one.
		return true, onDelta(r.Prompt.NotFound)
	}

	// The answering call: tool results appended, no tools offered.
	messages[0].Content = packing.System
	messages = append(messages, model.Message{Role: model.RoleAssistant, ToolCalls: calls})
	for i, call := range calls {
		ids := map[string]bool{}
		for _, f := range results[i].Fragments {
			ids[f.ID] = true
		}
		messages = append(messages, model.Message{Role: model.RoleTool, ToolCallID: call.ID, Content: packing.context(ids)})
	}
	t := time.Now()
	scrub := newFenceScrubber(packing.Fence, onDelta)
	reply, err := r.Chat.Stream(ctx, messages, nil, scrub.write)
	st.timings["model_answer"] = time.Since(t)
	st.add(reply.Usage)
	if err == nil {
		err = scrub.flush()
	}
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(reply.Content) == "" {
		// A model that asks for tools again gets no second round; with no
		// text of its own, the honest answer is the not-found wording.
		return true, onDelta(r.Prompt.NotFound)
	}
	r.emitCitations(reply.Content, packing.Packed, st)
	return strings.TrimSpace(reply.Content) == strings.TrimSpace(r.Prompt.NotFound), nil
}

// runTools runs the round's tool calls in parallel.
func (r *Runner) runTools(ctx context.Context, calls []model.ToolCall, principals []string, st *turnState) ([]Retrieval, error) {
	results := make([]Retrieval, len(calls))
	errs := make([]error, len(calls))
	done := make(chan int, len(calls))
	for i, call := range calls {
		query, err := r.toolQuery(call)
		st.emit(Event{Type: EventToolCall, Data: toolCall{Name: call.Name, Query: query}})
		if err != nil {
			results[i], errs[i] = Retrieval{Query: query}, nil // an unusable call finds nothing
			done <- i
			continue
		}
		go func(i int, name, query string) {
			if name == webSearchToolName {
				results[i], errs[i] = r.WebSearch.Search(ctx, query)
			} else {
				results[i], errs[i] = r.Searcher.Search(ctx, query, principals)
			}
			done <- i
		}(i, call.Name, query)
	}
	for range calls {
		<-done
	}
	for i, res := range results {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: %w", calls[i].Name, errs[i])
		}
		st.cacheHit = st.cacheHit || res.CacheHit
		for stage, d := range res.Timings {
			st.timings[stage] += d
		}
	}
	return results, nil
}

// toolQuery reads the query of a search call; a tool the route did not
// offer finds nothing.
func (r *Runner) toolQuery(call model.ToolCall) (string, error) {
	if call.Name != searchToolName && (call.Name != webSearchToolName || r.WebSearch == nil) {
		return "", fmt.Errorf("unknown tool %q", call.Name)
	}
	var args struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil || strings.TrimSpace(args.Query) == "" {
		return "", fmt.Errorf("%s arguments %q: want {\"query\": \"…\"}", call.Name, call.Arguments)
	}
	return strings.TrimSpace(args.Query), nil
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
	t := time.Now()
	reply, err := r.Chat.Stream(ctx, []model.Message{
		{Role: model.RoleSystem, Content: "Rewrite the user's last question as one self-contained search query. Reply with the query only."},
		{Role: model.RoleUser, Content: transcript.String()},
	}, nil, nil)
	st.timings["condense"] = time.Since(t)
	st.add(reply.Usage)
	if err != nil {
		return "", err
	}
	if q := strings.TrimSpace(reply.Content); q != "" {
		return q, nil
	}
	return question, nil
}

func (r *Runner) emitRetrievals(results []Retrieval, packing Packing, st *turnState) {
	markers := map[string]Fragment{}
	for _, f := range packing.Packed {
		markers[f.ID] = f
	}
	for _, res := range results {
		ev := retrieval{Query: res.Query, Intent: res.Intent, CacheHit: res.CacheHit, Dropped: packing.Dropped}
		for _, f := range res.Fragments {
			packed, ok := markers[f.ID]
			if !ok {
				continue
			}
			ev.Sources = append(ev.Sources, retrievalSource{Marker: packed.Marker, Title: f.Title, HeadingPath: f.HeadingPath,
				SourceURI: f.SourceURI, ImageURLs: f.ImageURLs, Score: f.Score, Kind: f.Kind, Reassembled: f.Reassembled})
		}
		st.emit(Event{Type: EventRetrieval, Data: ev})
	}
}

var markerPattern = regexp.MustCompile(`\[(S\d+)\]`)

// emitCitations reports the markers the answer used, in order of first use.
func (r *Runner) emitCitations(answer string, packed []Fragment, st *turnState) {
	byMarker := map[string]Fragment{}
	for _, f := range packed {
		byMarker[f.Marker] = f
	}
	seen := map[string]bool{}
	for _, m := range markerPattern.FindAllStringSubmatch(answer, -1) {
		f, ok := byMarker[m[1]]
		if !ok || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		st.emit(Event{Type: EventCitation, Data: citation{Marker: m[1], Title: f.Title, SourceURI: f.SourceURI, Heading: f.HeadingPath}})
	}
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
