package turnlog

import (
	"context"
	"sync"
	"time"

	"github.com/ragroute/ragroute/internal/route"
)

// memoryLog is the Log of a single replica.
type memoryLog struct {
	mu    sync.Mutex
	turns map[string]*memoryTurn
	// finished lists the finished turns, oldest first: expired turns are
	// freed from its front, and so is the oldest when the log is full.
	finished  []finishedTurn
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

// finishedTurn is an entry of the finished list; turn tells it from a
// later turn started under the same id.
type finishedTurn struct {
	id   string
	turn *memoryTurn
}

// NewMemory keeps at most maxTurns turns in this replica's memory; a
// finished turn is freed retention after it ended, or earlier, oldest
// first, when a new turn needs its room. Only maxTurns turns all still
// running refuse a new one.
func NewMemory(retention time.Duration, maxTurns int, now func() time.Time) Log {
	return &memoryLog{turns: map[string]*memoryTurn{}, retention: retention, maxTurns: maxTurns, maxEvents: 100000, now: now}
}

// Len is how many turns the log holds, running and finished.
func (l *memoryLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.turns)
}

func (l *memoryLog) Start(_ context.Context, id, owner string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for len(l.finished) > 0 && now.Sub(l.finished[0].turn.finished) > l.retention {
		l.freeOldestFinished()
	}
	// Finished turns kept for reconnects give way to a new turn: counting
	// them against the cap let one user's burst refuse everyone's turns
	// until retention ran out.
	for len(l.turns) >= l.maxTurns && len(l.finished) > 0 {
		l.freeOldestFinished()
	}
	if len(l.turns) >= l.maxTurns {
		return ErrTooManyTurns
	}
	l.turns[id] = &memoryTurn{owner: owner, changed: make(chan struct{})}
	return nil
}

// freeOldestFinished drops the front of the finished list, and its turn
// unless a new turn has taken the id since.
func (l *memoryLog) freeOldestFinished() {
	f := l.finished[0]
	l.finished[0] = finishedTurn{} // let the turn's events be collected
	l.finished = l.finished[1:]
	if l.turns[f.id] == f.turn {
		delete(l.turns, f.id)
	}
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
		l.finished = append(l.finished, finishedTurn{id: id, turn: t})
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
