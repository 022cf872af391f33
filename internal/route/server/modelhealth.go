package server

import (
	"context"
	"time"
)

// watchModel checks the chat model until ctx ends, setting
// ragroute_model_up, and logs when the model goes down or comes back
// rather than on every check.
func (s *Server) watchModel(ctx context.Context) {
	every := s.opts.ModelCheckEvery
	if every <= 0 {
		every = 15 * time.Second
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	wasUp := true
	for {
		check, cancel := context.WithTimeout(ctx, min(every, 5*time.Second))
		err := s.opts.ModelHealth(check)
		cancel()
		if ctx.Err() != nil {
			return
		}
		up := err == nil
		s.metrics.setModelUp(up)
		if up != wasUp && s.opts.Logger != nil {
			if up {
				s.opts.Logger.Info("chat model answers again")
			} else {
				s.opts.Logger.Warn("chat model health check failed", "error", err)
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
