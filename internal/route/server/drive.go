package server

import (
	"context"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// Every surface that plays a turn (POST /v1/turns, the OpenAI facade,
// streamed or whole, and MCP's ask) admits it, then hands it to drive,
// the one caller of the engine. The surfaces differ only in what they do
// with each event (deliver) and with the outcome.

// turnDriver is one admitted turn, ready to play.
type turnDriver struct {
	s     *Server
	input turn.Input
	// user asks the turn; endpoint names the surface in its log line.
	user, endpoint string
	// release gives back the turn's admission slot; it may be called
	// more than once.
	release func()
}

// turnOf readies input, admitted as in, to be played for endpoint.
func (s *Server) turnOf(in admitted, input turn.Input, endpoint string) turnDriver {
	return turnDriver{s: s, input: input, user: in.identity.User, endpoint: endpoint, release: in.release}
}

// deliverer hands one event of the turn to its surface: it appends it to
// the turn log, writes a chunk or sends progress. ctx is the turn's. An
// error cancels the turn, as no client could read the rest of it; the
// events that follow, the final one among them, are still delivered.
type deliverer func(ctx context.Context, ev turn.Event) error

// drive plays the turn under ctx, whose span the turn's trace hangs from,
// for at most the turn timeout, and returns its outcome once it ended.
// Each event is folded into the outcome and observed (metrics, the log
// line, the answer kept for feedback) before deliver (nil: the surface
// answers the outcome only) gets it. The slot goes back before the final
// event is delivered, so a client that asks again as soon as it reads it
// is not refused by its own finished turn.
func (d turnDriver) drive(ctx context.Context, deliver deliverer) *turn.Outcome {
	defer d.release()
	ctx, cancel := context.WithTimeout(ctx, d.s.opts.Limits.TurnTimeout)
	defer cancel()
	outcome := &turn.Outcome{}
	observer := d.s.observeTurn(ctx, d.input, d.user, d.endpoint, outcome)
	d.s.opts.Engine.Run(ctx, d.input, func(ev turn.Event) {
		outcome.Add(ev)
		observer.event(ev)
		if ev.Final() {
			d.release()
		}
		if deliver != nil && deliver(ctx, ev) != nil {
			cancel()
		}
	})
	return outcome
}
