package server

import (
	"errors"
	"net/http"
	"time"
)

// readyCheckTimeout bounds a readiness check: within the probe's own 2 s
// timeout (the Deployment's readiness probe), so a hung Milvus is reported
// as such and logged, not as a probe timeout.
const readyCheckTimeout = 1500 * time.Millisecond

// ready answers {"ready":true}, or 503 {"ready":false,"notReady":[…]}
// naming the dependencies, from the shared check (readyMemo). The probe is
// unauthenticated, so the errors (addresses, internal URLs) go to the log
// only.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, readiness{NotReady: []string{"shutdown"}})
		return
	}
	err := s.readiness.result(r.Context())
	if r.Context().Err() != nil {
		return // the prober left
	}
	if err == nil {
		writeJSON(w, http.StatusOK, readiness{Ready: true})
		return
	}
	notReady := notReadyDependencies(err)
	if s.opts.Logger != nil {
		s.opts.Logger.Warn("route not ready", "notReady", notReady, "error", err)
	}
	writeJSON(w, http.StatusServiceUnavailable, readiness{NotReady: notReady})
}

// NotReadyError names the dependency a readiness check found not ready.
// /readyz shows the name; Err goes to the log only.
type NotReadyError struct {
	Dependency string // e.g. "milvus"
	Err        error
}

func (e *NotReadyError) Error() string { return e.Dependency + " not ready: " + e.Err.Error() }

func (e *NotReadyError) Unwrap() error { return e.Err }

// Drain makes /readyz fail from now on, without waiting for a check: the
// route is shutting down, and its Service should stop sending it requests
// (it still serves them).
func (s *Server) Drain() { s.draining.Store(true) }

// readiness is the body of /readyz.
type readiness struct {
	Ready    bool     `json:"ready"`
	NotReady []string `json:"notReady,omitempty"`
}

// notReadyDependencies names the dependencies in err, which may join
// several; a failure without a name is "unknown" (its error is logged).
func notReadyDependencies(err error) []string {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var names []string
		for _, inner := range joined.Unwrap() {
			names = append(names, notReadyDependencies(inner)...)
		}
		return names
	}
	var named *NotReadyError
	if errors.As(err, &named) {
		return []string{named.Dependency}
	}
	return []string{"unknown"}
}
