package server

import (
	"context"
	"sync"
	"time"
)

// readyMemoFor is how long a readiness result answers every probe: /readyz
// is unauthenticated and each check costs Milvus round trips, so a flood
// of probes costs one check a second, not one each.
const readyMemoFor = time.Second

// readyMemo runs at most one readiness check at a time: the probes that
// arrive while it runs, and within readyMemoFor after it ended, share its
// result.
type readyMemo struct {
	check func(ctx context.Context) error
	now   func() time.Time
	// base bounds the checks (cancelled on shutdown); each also runs
	// within readyCheckTimeout, whoever waits for it.
	base context.Context

	mu      sync.Mutex
	running chan struct{} // closed when the check in flight ends; nil if none
	held    bool          // a check has ended: at and err are its
	at      time.Time
	err     error
}

// result is the last check's result if it is recent, else that of the
// check in flight, started if none is. It returns early with ctx's error
// when ctx ends first (the check goes on for the next probe).
func (m *readyMemo) result(ctx context.Context) error {
	m.mu.Lock()
	if m.held && m.now().Sub(m.at) < readyMemoFor {
		defer m.mu.Unlock()
		return m.err
	}
	running := m.running
	if running == nil {
		running = make(chan struct{})
		m.running = running
		go m.run(running)
	}
	m.mu.Unlock()
	select {
	case <-running:
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// run makes one check, keeps its result and closes done.
func (m *readyMemo) run(done chan struct{}) {
	ctx, cancel := context.WithTimeout(m.base, readyCheckTimeout)
	defer cancel()
	err := m.check(ctx)
	m.mu.Lock()
	m.held, m.at, m.err, m.running = true, m.now(), err, nil
	m.mu.Unlock()
	close(done)
}
