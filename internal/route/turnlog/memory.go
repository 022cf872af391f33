package turnlog

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/ragroute/ragroute/internal/route/turn"
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
	// maxBytes bounds the events of all turns together, bytes what they
	// hold (eventBytes): a count of turns alone let 10,000 long turns
	// hold about 290 MiB of a 512 MiB pod.
	maxBytes int64
	bytes    int64
	now      func() time.Time
}

type memoryTurn struct {
	owner    string
	events   []turn.Event
	bytes    int64
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

// DefaultMaxBytes is the memory log's byte budget when the route config
// sets none (QueryRoute spec.turns.maxMemoryMiB): an eighth of the route
// pod's default 512 MiB memory limit, room for over 2,000 typical turns
// of about 29 KiB.
const DefaultMaxBytes = 64 << 20

// turnShare is the part of the byte budget one turn may hold: one turn,
// or a few, cannot push every other user's finished turns out, nor end
// their running ones.
const turnShare = 16

// NewMemory keeps at most maxTurns turns, whose events hold at most about
// maxBytes, in this replica's memory (maxBytes 0: DefaultMaxBytes). A
// finished turn is freed retention after it ended, or earlier, oldest
// first, when a new turn or event needs its room. Only running turns
// holding all maxTurns, or too much of maxBytes to leave a new turn its
// share, refuse a new turn. A turn whose
// events pass a sixteenth of maxBytes, or an event running turns have no
// room for, ends the turn with a too_long error event.
func NewMemory(retention time.Duration, maxTurns int, maxBytes int64, now func() time.Time) Log {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &memoryLog{turns: map[string]*memoryTurn{}, retention: retention, maxTurns: maxTurns, maxEvents: 100000, maxBytes: maxBytes, now: now}
}

// eventBytes is about what ev takes in memory: its data as JSON (strings
// and numbers, about as long in a Go value) and the event itself.
func eventBytes(ev turn.Event) int64 {
	const eventOverhead = 64 // the Event value, its type, the slice's slack
	data, _ := json.Marshal(ev.Data)
	return int64(len(data)+len(ev.Type)) + eventOverhead
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
	// A new turn needs room for its share of the bytes.
	full := func() bool { return len(l.turns) >= l.maxTurns || l.bytes+l.maxBytes/turnShare > l.maxBytes }
	for full() && len(l.finished) > 0 {
		l.freeOldestFinished()
	}
	if full() {
		return ErrTooManyTurns
	}
	if old, ok := l.turns[id]; ok && !old.done {
		l.bytes -= old.bytes // a running turn replaced; a finished one is freed from the list
	}
	l.turns[id] = &memoryTurn{owner: owner, changed: make(chan struct{})}
	return nil
}

// makeRoom frees the oldest finished turns until n more bytes fit the
// budget; false if they do not, running turns holding the rest.
func (l *memoryLog) makeRoom(n int64) bool {
	for l.bytes+n > l.maxBytes && len(l.finished) > 0 {
		l.freeOldestFinished()
	}
	return l.bytes+n <= l.maxBytes
}

// freeOldestFinished drops the front of the finished list, and its turn
// unless a new turn has taken the id since.
func (l *memoryLog) freeOldestFinished() {
	f := l.finished[0]
	l.finished[0] = finishedTurn{} // let the turn's events be collected
	l.finished = l.finished[1:]
	l.bytes -= f.turn.bytes
	if l.turns[f.id] == f.turn {
		delete(l.turns, f.id)
	}
}

func (l *memoryLog) Append(_ context.Context, id string, ev turn.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.turns[id]
	if !ok {
		return ErrTurnNotFound
	}
	if t.done {
		return nil // nothing follows the last event
	}
	size := eventBytes(ev)
	if !ev.Final() {
		switch {
		case len(t.events) >= l.maxEvents-1:
			ev = tooLong("the turn produced too many events")
		case t.bytes+size > l.maxBytes/turnShare:
			ev = tooLong("the turn's events passed its share of the turn log's memory")
		case !l.makeRoom(size):
			ev = tooLong("running turns hold all of the turn log's memory")
		}
	}
	if ev.Final() {
		size = eventBytes(ev)
		// The last event always fits: older finished turns give way, and
		// a turn is never freed by its own end.
		l.makeRoom(size)
	}
	ev.ID = int64(len(t.events) + 1)
	t.events = append(t.events, ev)
	t.bytes += size
	l.bytes += size
	if ev.Final() {
		t.done, t.finished = true, l.now()
		l.finished = append(l.finished, finishedTurn{id: id, turn: t})
	}
	close(t.changed)
	t.changed = make(chan struct{})
	return nil
}

func (l *memoryLog) Read(ctx context.Context, id string, after int64, wait time.Duration) ([]turn.Event, bool, error) {
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
			events := append([]turn.Event{}, t.events[min(after, int64(len(t.events))):]...)
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

// tooLong is the error event that ends a turn the log cannot keep going.
func tooLong(why string) turn.Event {
	return turn.NewEvent(turn.Failed{Code: "too_long", Message: why})
}
