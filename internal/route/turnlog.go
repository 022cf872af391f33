package route

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrTurnNotFound: no such turn, or it was freed after its retention.
var ErrTurnNotFound = errors.New("turn not found")

// ErrTooManyTurns: the log is full; the client should retry later.
var ErrTooManyTurns = errors.New("too many turns in flight")

// TurnLog keeps each turn's events so a client can stream them, and
// reconnect, from any replica that shares the log.
type TurnLog interface {
	// Start registers a turn of owner (the asking user).
	Start(ctx context.Context, id, owner string) error
	// Append adds an event, assigning its ID.
	Append(ctx context.Context, id string, ev Event) error
	// Read returns the events after the given ID, waiting up to wait for
	// one to arrive; done is true when the turn's last event is among
	// what was returned or already read.
	Read(ctx context.Context, id string, after int64, wait time.Duration) (events []Event, done bool, err error)
	// Owner says who started the turn.
	Owner(ctx context.Context, id string) (string, error)
}

// memoryLog is the TurnLog of a single replica.
type memoryLog struct {
	mu        sync.Mutex
	turns     map[string]*memoryTurn
	retention time.Duration
	maxTurns  int
	maxEvents int
	now       func() time.Time
}

type memoryTurn struct {
	owner    string
	events   []Event
	done     bool
	finished time.Time
	changed  chan struct{} // closed and replaced on every append
}

// NewMemoryTurnLog keeps at most maxTurns turns; a finished turn is freed
// retention after it ended.
func NewMemoryTurnLog(retention time.Duration, maxTurns int, now func() time.Time) TurnLog {
	return &memoryLog{turns: map[string]*memoryTurn{}, retention: retention, maxTurns: maxTurns, maxEvents: 100000, now: now}
}

func (l *memoryLog) Start(_ context.Context, id, owner string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for key, t := range l.turns {
		if t.done && now.Sub(t.finished) > l.retention {
			delete(l.turns, key)
		}
	}
	if len(l.turns) >= l.maxTurns {
		return ErrTooManyTurns
	}
	l.turns[id] = &memoryTurn{owner: owner, changed: make(chan struct{})}
	return nil
}

func (l *memoryLog) Append(_ context.Context, id string, ev Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.turns[id]
	if !ok {
		return ErrTurnNotFound
	}
	if t.done {
		return nil // nothing follows the last event
	}
	if len(t.events) >= l.maxEvents-1 && !ev.final() {
		ev = Event{Type: EventError, Data: turnError{Code: "too_long", Message: "the turn produced too many events"}}
	}
	ev.ID = int64(len(t.events) + 1)
	t.events = append(t.events, ev)
	if ev.final() {
		t.done, t.finished = true, l.now()
	}
	close(t.changed)
	t.changed = make(chan struct{})
	return nil
}

func (l *memoryLog) Read(ctx context.Context, id string, after int64, wait time.Duration) ([]Event, bool, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		l.mu.Lock()
		t, ok := l.turns[id]
		if !ok {
			l.mu.Unlock()
			return nil, false, ErrTurnNotFound
		}
		if after < 0 {
			after = 0
		}
		if int64(len(t.events)) > after || t.done {
			events := append([]Event{}, t.events[min(after, int64(len(t.events))):]...)
			done := t.done
			l.mu.Unlock()
			return events, done, nil
		}
		changed := t.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return nil, false, nil
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

func (l *memoryLog) Owner(_ context.Context, id string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.turns[id]
	if !ok {
		return "", ErrTurnNotFound
	}
	return t.owner, nil
}
