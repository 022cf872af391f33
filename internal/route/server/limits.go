package server

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
	// StreamsPerUser bounds one user's open streams, every long-lived
	// response (a turn's events, a streamed completion, an MCP request);
	// more is 429. MaxStreams bounds the replica's, all users together;
	// more is 503. Each open event stream may hold a connection of the
	// turn log's wait pool.
	StreamsPerUser, MaxStreams int
	// StreamWriteTimeout bounds each write of a stream to its client: a
	// client that stops reading loses its stream instead of holding it.
	StreamWriteTimeout time.Duration
}

// maxStreams is the replica's default bound on open event streams: below
// the 1,024 connections of the turn log's Redis wait pool (cmd/ragroute),
// which a blocked reader holds each.
const maxStreams = 1000

// DefaultLimits suit a chat UI. The turn limits equal the QueryRoute's
// schema defaults (spec.limits).
func DefaultLimits() Limits {
	return Limits{BodyBytes: 1 << 20, Messages: 64, MessageBytes: 32 << 10, TurnTimeout: 5 * time.Minute, KeepAlive: 15 * time.Second,
		BodyReadTimeout: 30 * time.Second, ConcurrentTurnsPerUser: 4, TurnsPerMinutePerUser: 30, MaxInFlightTurns: 256,
		StreamsPerUser: 16, MaxStreams: maxStreams, StreamWriteTimeout: 30 * time.Second}
}
