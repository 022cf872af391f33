package turnlog

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// DefaultFeedbackBytes bounds what the memory feedback store holds when
// the route sets no budget: answered turns and verdicts get this much
// each, about 8 MiB of a route pod's default 512 MiB.
const DefaultFeedbackBytes = 4 << 20

// memoryFeedback is the Feedback of a single replica: lost when it
// restarts, and readable by no other process.
type memoryFeedback struct {
	mu       sync.Mutex
	turns    expiring[AnsweredTurn]
	verdicts expiring[RatedTurn]
	now      func() time.Time
}

// NewMemoryFeedback keeps answered turns ratable for window and verdicts
// for retention in this replica's memory, each within maxBytes (0:
// DefaultFeedbackBytes), the oldest giving way first.
func NewMemoryFeedback(window, retention time.Duration, maxBytes int64, now func() time.Time) Feedback {
	if maxBytes <= 0 {
		maxBytes = DefaultFeedbackBytes
	}
	return &memoryFeedback{
		turns:    expiring[AnsweredTurn]{entries: map[string]expiringEntry[AnsweredTurn]{}, ttl: window, maxBytes: maxBytes},
		verdicts: expiring[RatedTurn]{entries: map[string]expiringEntry[RatedTurn]{}, ttl: retention, maxBytes: maxBytes},
		now:      now,
	}
}

func (f *memoryFeedback) Keep(_ context.Context, t AnsweredTurn) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.turns.put(t.ID, t, f.now())
	return nil
}

func (f *memoryFeedback) Turn(_ context.Context, id string) (AnsweredTurn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.turns.get(id, f.now())
	if !ok {
		return AnsweredTurn{}, ErrTurnNotFound
	}
	return t, nil
}

func (f *memoryFeedback) Rate(_ context.Context, t AnsweredTurn, v Verdict) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verdicts.put(t.ID, RatedTurn{Turn: t, Verdict: v}, f.now())
	return nil
}

func (f *memoryFeedback) Verdicts(context.Context) ([]RatedTurn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.verdicts.all(f.now()), nil
}

// expiring holds values by id for ttl after they were put, within
// maxBytes (each counts as its JSON): the oldest go first. Putting an id
// again replaces its value and starts its ttl anew.
type expiring[T any] struct {
	entries  map[string]expiringEntry[T]
	order    []expiringKey // oldest first; an id put again has a stale older key
	seq      uint64        // tells a key from a stale one
	ttl      time.Duration
	bytes    int64
	maxBytes int64
}

type expiringEntry[T any] struct {
	value T
	seq   uint64
	bytes int64
}

type expiringKey struct {
	id  string
	seq uint64
	at  time.Time
}

func (e *expiring[T]) put(id string, v T, now time.Time) {
	data, _ := json.Marshal(v)
	size := int64(len(data))
	if old, ok := e.entries[id]; ok {
		e.bytes -= old.bytes
	}
	e.seq++
	e.entries[id] = expiringEntry[T]{value: v, seq: e.seq, bytes: size}
	e.order = append(e.order, expiringKey{id: id, seq: e.seq, at: now})
	e.bytes += size
	e.expire(now)
	for e.bytes > e.maxBytes && len(e.order) > 1 {
		e.dropOldest()
	}
}

func (e *expiring[T]) get(id string, now time.Time) (T, bool) {
	e.expire(now)
	entry, ok := e.entries[id]
	return entry.value, ok
}

// all is every value held, oldest first.
func (e *expiring[T]) all(now time.Time) []T {
	e.expire(now)
	out := make([]T, 0, len(e.entries))
	for _, k := range e.order {
		if entry, ok := e.entries[k.id]; ok && entry.seq == k.seq {
			out = append(out, entry.value)
		}
	}
	return out
}

// expire drops the values put more than ttl ago.
func (e *expiring[T]) expire(now time.Time) {
	for len(e.order) > 0 && now.Sub(e.order[0].at) > e.ttl {
		e.dropOldest()
	}
}

// dropOldest drops the front key, and its value unless it was put again
// since.
func (e *expiring[T]) dropOldest() {
	k := e.order[0]
	e.order = e.order[1:]
	if entry, ok := e.entries[k.id]; ok && entry.seq == k.seq {
		e.bytes -= entry.bytes
		delete(e.entries, k.id)
	}
}
