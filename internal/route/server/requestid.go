package server

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// requestIDHeader carries each response's id; a request that starts a
// turn uses it as the turn id, which the logs name.
const requestIDHeader = "X-Request-Id"

// withRequestID gives every response a fresh id. A caller's own id is not
// taken: a turn id must be unguessable and unique.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(requestIDHeader, newTurnID())
		next.ServeHTTP(w, r)
	})
}

// requestID is the id withRequestID gave this response (a fresh one when
// the handler runs without it, as in tests of one handler).
func requestID(w http.ResponseWriter) string {
	if id := w.Header().Get(requestIDHeader); id != "" {
		return id
	}
	id := newTurnID()
	w.Header().Set(requestIDHeader, id)
	return id
}

// newTurnID is 128 random bits in hex.
func newTurnID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
