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
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// ChatModel streams one chat call (model.Chat).
type ChatModel interface {
	Stream(ctx context.Context, messages []model.Message, tools []model.Tool, gen model.Generation, onDelta func(string) error) (model.Reply, error)
}

// Engine is a route's configuration of its turns; Run plays one. It holds
// nothing of a turn, so one Engine serves every turn of the route at once.
type Engine struct {
	// Chat is the chat model; nil only for a route without one (extractive
	// answers, searchPolicy always).
	Chat     ChatModel
	Searcher *retrieval.Searcher
	Prompt   Prompt
	// Mode is singleRound (one round of tools, the default) or agentic
	// (the multi-round research harness, agentic.go).
	Mode    podconfig.Mode
	Search  SearchSettings
	Window  Window
	Answer  AnswerSettings
	Agentic AgenticSettings
	// Logger, when set, hears each failed turn's full error under its id;
	// the client's error event carries only a code and a fixed message.
	Logger *slog.Logger
}

// Run plays one turn, emitting its events; the last is turn.completed or
// error.
func (e *Engine) Run(ctx context.Context, in Input, emit func(Event)) {
	t := newTurn(e, in, emit)
	start := time.Now()
	play, mode := e.pickMode()
	t.emit(Started{TurnID: in.ID, ConversationID: in.ConversationID, Mode: mode})
	ctx, span := startSpan(ctx, "ragroute.turn", attribute.String("ragroute.turn_id", in.ID), attribute.String("ragroute.mode", mode),
		attribute.String("ragroute.conversation_id", in.ConversationID))
	notFound, err := guarded(ctx, t, play)
	span.SetAttributes(attribute.Bool("ragroute.not_found", notFound))
	endSpan(span, err)
	if err != nil {
		ev := turnError(ctx, in.ID, err)
		if e.Logger != nil {
			e.Logger.Error("turn failed", "turn", in.ID, "code", ev.Code, "error", err)
		}
		t.emit(ev)
		return
	}
	t.state.took("total", time.Since(start))
	t.emit(t.state.completed(notFound))
}

// mode is how a turn finds what it answers from, and then answers:
// singleRound (single_round.go) or agentic (agentic.go).
type mode interface {
	Play(ctx context.Context, t *turn) (notFound bool, err error)
}

// pickMode is the route's mode, and its name as turn.started reports it:
// single-round turns report their search policy.
func (e *Engine) pickMode() (mode, string) {
	if e.Mode == podconfig.ModeAgentic {
		return agentic{}, string(podconfig.ModeAgentic)
	}
	return singleRound{}, string(e.Search.Policy)
}

// guarded plays the turn, a panic in it becoming the turn's error: a turn
// runs in a goroutine of its own, and a panic there would end the replica
// and every other user's turn with it.
func guarded(ctx context.Context, t *turn, play mode) (notFound bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the turn panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return play.Play(ctx, t)
}
