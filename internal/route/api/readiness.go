package api

import (
	"context"
	"errors"
	"time"
)

// NotReadyError names the dependency a readiness check found not ready.
// /readyz shows the name; Err goes to the log only.
type NotReadyError struct {
	Dependency string // e.g. "milvus"
	Err        error
}

func (e *NotReadyError) Error() string { return e.Dependency + " not ready: " + e.Err.Error() }

func (e *NotReadyError) Unwrap() error { return e.Err }

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

// watchModel checks the chat model until ctx ends, setting
// ragroute_model_up, and logs when the model goes down or comes back
// rather than on every check.
func (s *Server) watchModel(ctx context.Context) {
	every := s.ModelCheckEvery
	if every <= 0 {
		every = 15 * time.Second
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	wasUp := true
	for {
		check, cancel := context.WithTimeout(ctx, min(every, 5*time.Second))
		err := s.ModelHealth(check)
		cancel()
		if ctx.Err() != nil {
			return
		}
		up := err == nil
		s.metrics.setModelUp(up)
		if up != wasUp && s.Logger != nil {
			if up {
				s.Logger.Info("chat model answers again")
			} else {
				s.Logger.Warn("chat model health check failed", "error", err)
			}
		}
		wasUp = up
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
