package turnlog

import (
	"context"
	"errors"
	"time"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// ErrTurnNotFound is returned for no such turn, or one freed after its retention.
var ErrTurnNotFound = errors.New("turn not found")

// ErrTooManyTurns is returned when the log is full; the client should retry later.
var ErrTooManyTurns = errors.New("too many turns in flight")

// Log keeps each turn's events so a client can stream them, and
// reconnect, from any replica that shares the log.
type Log interface {
	// Start registers a turn of owner (the asking user).
	Start(ctx context.Context, id, owner string) error
	// Append adds an event, assigning its ID.
	Append(ctx context.Context, id string, ev turn.Event) error
	// Read returns the events after the given ID, waiting up to wait for
	// one to arrive; done is true when the turn's last event is among
	// what was returned or already read.
	Read(ctx context.Context, id string, after int64, wait time.Duration) (events []turn.Event, done bool, err error)
	// Owner says who started the turn.
	Owner(ctx context.Context, id string) (string, error)
}
