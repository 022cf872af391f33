package turnlog

import (
	"context"
	"sync"
	"time"

	"github.com/ragroute/ragroute/internal/route"
)

// memoryLog is the Log of a single replica.
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
	events   []route.Event
	done     bool
	finished time.Time
	changed  chan struct{} // closed and replaced on every append
}

// NewMemory keeps at most maxTurns turns in this replica's memory; a
// finished turn is freed retention after it ended.
func NewMemory(retention time.Duration, maxTurns int, now func() time.Time) Log {
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

func (l *memoryLog) Append(_ context.Context, id string, ev route.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.turns[id]
	if !ok {
		return ErrTurnNotFound
	}
	if t.done {
		return nil // nothing follows the last event
	}
	if len(t.events) >= l.maxEvents-1 && !ev.Final() {
		ev = route.Event{Type: route.EventError, Data: route.TurnError{Code: "too_long", Message: "the turn produced too many events"}}
	}
	ev.ID = int64(len(t.events) + 1)
	t.events = append(t.events, ev)
	if ev.Final() {
		t.done, t.finished = true, l.now()
	}
	close(t.changed)
	t.changed = make(chan struct{})
	return nil
}

func (l *memoryLog) Read(ctx context.Context, id string, after int64, wait time.Duration) ([]route.Event, bool, error) {
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
			events := append([]route.Event{}, t.events[min(after, int64(len(t.events))):]...)
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
