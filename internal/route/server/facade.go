package server

import (
	"cmp"
	"net/http"

	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// The OpenAI-compatible facade lets existing chat UIs and SDKs use a route:
// POST /v1/chat/completions, streamed or not. The route's platform prompt
// stays on top: system messages from the client are ignored. Citations and
// sources travel in the extension field "ragroute".

// turnIDHeader names the turn a facade response answers, on every
// response of a completion that started one, streamed or not: a client
// rates the answer with POST /v1/turns/{id}/feedback.
const turnIDHeader = "X-Ragroute-Turn-Id"

// extension is what a route adds to an OpenAI response.
type extension struct {
	TurnID    string                 `json:"turn_id"`
	Citations []turn.Citation        `json:"citations"`
	Sources   []turn.RetrievalSource `json:"sources"`
	NotFound  bool                   `json:"not_found"`
	// Harness is an agentic turn's research, step by step: its
	// round.started, tool.call, retrieval, memory.saved and finalized
	// events, as the turn's stream has them.
	Harness []harnessStep `json:"harness,omitempty"`
	// Grounding is each answer sentence's support (route/answer).
	Grounding []answer.Grounding `json:"grounding,omitempty"`
	// AnswerChecks are turn.completed's: the grounded ratio, what was
	// withheld or removed, whether the answer was replaced.
	turn.AnswerChecks
}

// extensionOf is the extension of turn turnID's outcome.
func extensionOf(turnID string, o *turn.Outcome) extension {
	ext := extension{TurnID: turnID, Citations: nonNil(o.Citations), Sources: nonNil(o.Sources()), Grounding: o.Groundings}
	for _, ev := range o.Harness {
		ext.Harness = append(ext.Harness, harnessStep{ev.Type, ev.Data})
	}
	if c := o.Completed; c != nil {
		ext.NotFound, ext.AnswerChecks = c.NotFound, c.AnswerChecks
	}
	return ext
}

// nonNil is s, or an empty list: the extension's lists are never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// harnessStep is one event of an agentic turn's research.
type harnessStep struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// completionTurn is one facade request as both response modes play it.
type completionTurn struct {
	turn turnDriver
	// model is the name the answer carries: the request's, else ragroute.
	model        string
	includeUsage bool
}

// completions answers POST /v1/chat/completions: the request is admitted
// as any turn, then answered whole (completeOnce) or streamed
// (completeStream). A streamed answer also holds one of its user's streams
// (openStream), taken after the checks and before the turn's slot, so that
// a stream refused costs no turn.
func (s *Server) completions(w http.ResponseWriter, r *http.Request) error {
	var req completionRequest
	id, err := s.authenticate(r)
	if err != nil {
		return err
	}
	if err := s.decode(w, r, &req, req.format()); err != nil {
		return err
	}
	if err := s.checkWork(&req); err != nil {
		return err
	}
	ctx := r.Context()
	if req.Stream {
		var closeStream func()
		if ctx, closeStream, err = s.openStream(ctx, id.User); err != nil {
			return err
		}
		defer closeStream()
	}
	release, err := s.reserve(id.User)
	if err != nil {
		return err
	}
	defer release()
	turnID := requestID(w)
	w.Header().Set(turnIDHeader, turnID)
	input := turn.Input{ID: turnID, Messages: req.messages, Principals: id.Principals(), Generation: req.generation}
	c := completionTurn{turn: s.turnOf(admitted{identity: id, release: release}, input, "completions"), model: cmp.Or(req.Model, "ragroute")}
	if req.StreamOptions != nil {
		c.includeUsage = req.StreamOptions.IncludeUsage
	}
	if req.Stream {
		return s.completeStream(ctx, w, c)
	}
	return s.completeOnce(ctx, w, c)
}

// usageOf is a turn's token usage in OpenAI's shape.
func usageOf(o *turn.Outcome) map[string]int {
	var u turn.Usage
	if o.Completed != nil {
		u = o.Completed.Usage
	}
	return map[string]int{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_tokens": u.PromptTokens + u.CompletionTokens}
}
