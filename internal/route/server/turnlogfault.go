package server

import (
	"io"
	"net/http"
	"time"
)

// The turn log (Redis when replicas share turns) can fail apart from the
// turn: the client then hears turn_log_unavailable, never the store's own
// error text, which names internal addresses and goes to the log.

// codeTurnLogUnavailable: the turn log could not be written or read.
const codeTurnLogUnavailable = "turn_log_unavailable"

// retryTurnLog is the Retry-After while the turn log is down: about the
// time a Redis takes to restart.
const retryTurnLog = 5 * time.Second

// turnLogUnavailable is the 503 answer, with Retry-After, to a request the
// turn log failed; err goes to the log.
func turnLogUnavailable(err error) *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Code: codeTurnLogUnavailable, Message: "the turn log is unavailable; retry shortly",
		RetryAfter: retryTurnLog, Err: err}
}

// streamTurnLogUnavailable ends an event stream whose log failed with an
// error event that has no id: the turn may still be there when the log
// returns, so the client may reconnect with its Last-Event-ID.
func (s *Server) streamTurnLogUnavailable(stream *sseStream, turnID string, err error) {
	s.logError("turn log unavailable while streaming", turnID, err)
	broken := &apiError{Status: http.StatusServiceUnavailable, Code: codeTurnLogUnavailable,
		Message: "the turn log is unavailable; reconnect with Last-Event-ID to resume", Err: err}
	_ = stream.send(func(w io.Writer) { writeEvent(w, broken.streamEvent()) })
}

func (s *Server) logError(msg, turnID string, err error) {
	if s.opts.Logger != nil {
		s.opts.Logger.Error(msg, "turn", turnID, "error", err)
	}
}
