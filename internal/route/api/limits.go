package api

import "time"

// Limits bound what one request may ask, and how much one user and the
// replica may run. A turn limit left at zero takes its default.
type Limits struct {
	BodyBytes    int64
	Messages     int
	MessageBytes int
	// TurnTimeout bounds a turn, and a search (a search counts as a
	// turn).
	TurnTimeout time.Duration
	KeepAlive   time.Duration
	// BodyReadTimeout bounds reading a request body, so a client that
	// trickles one cannot hold a handler.
	BodyReadTimeout time.Duration
	// ConcurrentTurnsPerUser bounds one user's turns (and searches)
	// running at once; more is 429.
	ConcurrentTurnsPerUser int
	// TurnsPerMinutePerUser is one user's sustained rate of turns (and
	// searches), with a burst of ConcurrentTurnsPerUser; more is 429.
	TurnsPerMinutePerUser int
	// MaxInFlightTurns bounds the turns (and searches) running at once on
	// this replica, all users together; more is 503.
	MaxInFlightTurns int
}

// DefaultLimits suit a chat UI. The turn limits equal the QueryRoute's
// schema defaults (spec.limits).
func DefaultLimits() Limits {
	return Limits{BodyBytes: 1 << 20, Messages: 64, MessageBytes: 32 << 10, TurnTimeout: 5 * time.Minute, KeepAlive: 15 * time.Second,
		BodyReadTimeout: 30 * time.Second, ConcurrentTurnsPerUser: 4, TurnsPerMinutePerUser: 30, MaxInFlightTurns: 256}
}
