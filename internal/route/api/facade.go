package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/answer"
)

// The OpenAI-compatible facade lets existing chat UIs and SDKs use a route:
// POST /v1/chat/completions, streamed or not. The route's platform prompt
// stays on top: system messages from the client are ignored. Citations and
// sources travel in the extension field "ragroute".

// extension is what a route adds to an OpenAI response.
type extension struct {
	TurnID    string                  `json:"turn_id"`
	Citations []route.Citation        `json:"citations"`
	Sources   []route.RetrievalSource `json:"sources"`
	NotFound  bool                    `json:"not_found"`
	// Harness is an agentic turn's research, step by step: its
	// round.started, tool.call, retrieval, memory.saved and finalized
	// events, as the turn's stream has them.
	Harness []harnessStep `json:"harness,omitempty"`
	// Grounding is each answer sentence's support; GroundedRatio the
	// share supported (grounding.go).
	Grounding     []answer.Grounding `json:"grounding,omitempty"`
	GroundedRatio *float64           `json:"grounded_ratio,omitempty"`
	// AnswerReplaced: the model's answer fell short of the grounding
	// policy and the content is the extractive answer instead.
	AnswerReplaced bool `json:"answer_replaced,omitempty"`
	// WithheldSentences and LinksRemoved count what was not shown.
	WithheldSentences int `json:"withheld_sentences,omitempty"`
	LinksRemoved      int `json:"links_removed,omitempty"`
}

// harnessStep is one event of an agentic turn's research.
type harnessStep struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// collector turns a turn's events into the facade's answer.
type collector struct {
	ext     extension
	content strings.Builder
	usage   route.Usage
	err     *route.TurnError
}

func (c *collector) add(ev route.Event) {
	switch d := ev.Data.(type) {
	case route.Delta:
		c.content.WriteString(d.Text)
	case route.Citation:
		c.ext.Citations = append(c.ext.Citations, d)
	case route.RetrievalReport:
		if d.Round > 0 { // a harness search; the answer's own fragments come last, round 0
			c.ext.Harness = append(c.ext.Harness, harnessStep{ev.Type, d})
			break
		}
		c.ext.Sources = append(c.ext.Sources, d.Sources...)
	case route.ToolCall:
		if d.Round > 0 {
			c.ext.Harness = append(c.ext.Harness, harnessStep{ev.Type, d})
		}
	case route.RoundStarted, route.MemorySaved, route.Finalized:
		c.ext.Harness = append(c.ext.Harness, harnessStep{ev.Type, d})
	case answer.Grounding:
		c.ext.Grounding = append(c.ext.Grounding, d)
	case route.TurnCompleted:
		c.usage, c.ext.NotFound, c.ext.GroundedRatio = d.Usage, d.NotFound, d.GroundedRatio
		c.ext.AnswerReplaced, c.ext.WithheldSentences, c.ext.LinksRemoved = d.AnswerReplaced, d.Withheld, d.LinksRemoved
	case route.TurnError:
		c.err = &d
	}
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	id, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	var req completionRequest
	// Not strict: OpenAI clients send fields a route ignores.
	if !s.decodeBody(w, r, &req, false, "the body is not an OpenAI chat completion request: ") {
		return
	}
	messages, err := req.conversation()
	var gen model.Generation
	if err == nil {
		gen, err = req.generation()
	}
	if bad := (*requestError)(nil); errors.As(err, &bad) {
		apiErrorParam(w, http.StatusBadRequest, "bad_request", bad.param, bad.Error())
		return
	}
	if err := s.checkMessages(messages); err != nil {
		apiErrorParam(w, http.StatusBadRequest, "bad_messages", "messages", err.Error())
		return
	}
	release, refused := s.admission.admit(id.User)
	if refused != nil {
		s.refuse(w, refused)
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), s.Limits.TurnTimeout)
	defer cancel()
	turnID := requestID(w)
	in := route.TurnInput{ID: turnID, Messages: messages, Principals: id.Principals(), Generation: gen}
	c := &collector{ext: extension{TurnID: turnID, Citations: []route.Citation{}, Sources: []route.RetrievalSource{}}}
	name := req.Model
	if name == "" {
		name = "ragroute"
	}
	if !req.Stream {
		observer := s.observeTurn(turnID, id.User, "completions")
		s.Runner.Run(ctx, in, func(ev route.Event) { observer.event(ev); c.add(ev) })
		release() // before the answer, which a client may follow with its next turn
		if c.err != nil {
			retryAdvice(w, c.err.Code)
			apiError(w, errorStatus(c.err.Code), c.err.Code, c.err.Message)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-" + turnID, "object": "chat.completion", "created": time.Now().Unix(), "model": name,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": c.content.String()}}},
			"usage":    usageOf(c.usage),
			"ragroute": c.ext,
		})
		return
	}

	flusher, ok := startSSE(w)
	if !ok {
		return
	}
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any, extra map[string]any) {
		body := map[string]any{"id": "chatcmpl-" + turnID, "object": "chat.completion.chunk", "created": created, "model": name,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		for k, v := range extra {
			body[k] = v
		}
		data, _ := json.Marshal(body)
		fmt.Fprintf(w, "data: %s\n\n", data)
		flusher.Flush()
	}
	chunk(map[string]any{"role": "assistant"}, nil, nil)
	// The turn runs beside this writer so that, while nothing else is
	// sent (the model reads the window, a search runs), an SSE comment
	// every KeepAlive keeps idle-timeout proxies from cutting the stream.
	// SSE clients, OpenAI SDKs among them, skip comments.
	events := make(chan route.Event, 16)
	go func() {
		defer close(events)
		s.Runner.Run(ctx, in, func(ev route.Event) { events <- ev })
	}()
	observer := s.observeTurn(turnID, id.User, "completions")
	keepAlive := newIdleTicker(s.Limits.KeepAlive)
	defer keepAlive.stop()
	for running := true; running; {
		select {
		case ev, ok := <-events:
			if !ok {
				running = false
				break
			}
			observer.event(ev)
			c.add(ev)
			if d, ok := ev.Data.(route.Delta); ok {
				chunk(map[string]any{"content": d.Text}, nil, nil)
				keepAlive.reset()
			}
		case <-keepAlive.c:
			_, _ = io.WriteString(w, ": keep-alive\n\n")
			flusher.Flush()
		}
	}
	release() // before the last chunk, which a client may follow with its next turn
	if c.err != nil {
		data, _ := json.Marshal(map[string]any{"error": errorBody(errorStatus(c.err.Code), c.err.Code, "", c.err.Message)})
		fmt.Fprintf(w, "data: %s\n\n", data)
	} else {
		chunk(map[string]any{}, "stop", map[string]any{"ragroute": c.ext})
		if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
			// As OpenAI: one more chunk, with no choices, only when asked.
			data, _ := json.Marshal(map[string]any{"id": "chatcmpl-" + turnID, "object": "chat.completion.chunk", "created": created,
				"model": name, "choices": []any{}, "usage": usageOf(c.usage)})
			fmt.Fprintf(w, "data: %s\n\n", data)
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
}

// usageOf is a turn's token usage in OpenAI's shape.
func usageOf(u route.Usage) map[string]int {
	return map[string]int{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_tokens": u.PromptTokens + u.CompletionTokens}
}

// idleTicker ticks every interval since it was last reset; a zero
// interval never ticks.
type idleTicker struct {
	c        <-chan time.Time
	ticker   *time.Ticker
	interval time.Duration
}

func newIdleTicker(interval time.Duration) *idleTicker {
	if interval <= 0 {
		return &idleTicker{} // a nil channel: never ready
	}
	t := time.NewTicker(interval)
	return &idleTicker{c: t.C, ticker: t, interval: interval}
}

func (t *idleTicker) reset() {
	if t.ticker != nil {
		t.ticker.Reset(t.interval)
	}
}

func (t *idleTicker) stop() {
	if t.ticker != nil {
		t.ticker.Stop()
	}
}

// errorStatus is the HTTP status of a failed non-streamed completion: an
// OpenAI SDK retries 429 and 5xx with backoff.
func errorStatus(code string) int {
	switch code {
	case route.CodeRateLimited:
		return http.StatusTooManyRequests
	case route.CodeModelTimeout, route.CodeTimeout:
		return http.StatusGatewayTimeout
	case route.CodeCancelled:
		return http.StatusServiceUnavailable
	case route.CodeInternal:
		return http.StatusInternalServerError
	default:
		return http.StatusBadGateway
	}
}

// retryAdvice tells an OpenAI SDK, which retries 429 and 5xx on its own
// and would replay the whole turn, whether a retry can help: after a rate
// limit or an unavailable dependency, in a few seconds; after a model
// error or a timeout, not at all (x-should-retry, read by OpenAI's SDKs).
func retryAdvice(w http.ResponseWriter, code string) {
	switch code {
	case route.CodeRateLimited, route.CodeModelUnavailable, route.CodeKnowledgeUnavailable, route.CodeCancelled:
		w.Header().Set("Retry-After", retryAfterSeconds(retryUpstream))
	default:
		w.Header().Set("X-Should-Retry", "false")
	}
}

// retryUpstream is the Retry-After after an upstream failed: the route's
// own retries already waited for it.
const retryUpstream = 5 * time.Second
