package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// turnObserver watches one turn's events for the metrics and, at its end,
// writes the turn's one log line and keeps the answer for its user to
// rate (feedback.go).
type turnObserver struct {
	s    *Server
	turn turn.Input
	span trace.SpanContext
	// outcome is the turn's events so far, the one being observed
	// included: its driver folds each event before observing it.
	outcome  *turn.Outcome
	user     string
	endpoint string
	start    time.Time
	mode     string
	first    bool // the first delta was seen
}

// observeTurn starts watching turn, asked by user of endpoint under ctx
// (whose span the turn's trace hangs from), as outcome folds its events.
func (s *Server) observeTurn(ctx context.Context, turn turn.Input, user, endpoint string, outcome *turn.Outcome) *turnObserver {
	return &turnObserver{s: s, turn: turn, span: trace.SpanContextFromContext(ctx), outcome: outcome, user: user, endpoint: endpoint,
		start: time.Now()}
}

// event records ev: the time to the first answer text, the metrics of
// the last event, the answer to rate and the log line.
func (o *turnObserver) event(ev turn.Event) {
	switch data := ev.Data.(type) {
	case turn.Started:
		o.mode = data.Mode
	case turn.Delta:
		if !o.first {
			o.first = true
			o.s.metrics.firstToken.Observe(time.Since(o.start).Seconds())
		}
	}
	if ev.Final() || ev.Type == turn.EventRetrieval {
		o.s.metrics.observe(ev)
	}
	if _, ok := ev.Data.(turn.Completed); ok && o.s.opts.Feedback != nil {
		o.s.keepAnswered(answeredTurn(o.turn, o.user, o.span, o.outcome))
	}
	if ev.Final() {
		o.log(ev)
	}
}

// log writes one line per finished turn. The user is a hash: the log
// correlates a user's turns without naming them (pseudonymous: a known
// name can be hashed and compared).
func (o *turnObserver) log(ev turn.Event) {
	if o.s.opts.Logger == nil {
		return
	}
	sum := sha256.Sum256([]byte(o.user))
	attrs := []any{"turn", o.turn.ID, "user_hash", hex.EncodeToString(sum[:8]), "endpoint", o.endpoint, "mode", o.mode,
		"duration_ms", time.Since(o.start).Milliseconds()}
	switch data := ev.Data.(type) {
	case turn.Completed:
		result := "answered"
		if data.NotFound {
			result = "not_found"
		}
		attrs = append(attrs, "result", result, "timings_ms", data.Timings, "cache_hit", data.CacheHit,
			"prompt_tokens", data.Usage.PromptTokens, "completion_tokens", data.Usage.CompletionTokens)
		if data.Rounds > 0 {
			attrs = append(attrs, "rounds", data.Rounds)
		}
		o.s.opts.Logger.Info("turn finished", attrs...)
	case turn.Failed:
		o.s.opts.Logger.Warn("turn finished", append(attrs, "result", "error", "code", data.Code)...)
	default:
		o.s.opts.Logger.Log(nil, slog.LevelWarn, "turn finished", append(attrs, "result", "unknown")...) //nolint:staticcheck // no context here
	}
}
