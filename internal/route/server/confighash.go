package server

import (
	"net/http"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// withConfigHash names, on every answer, the config this replica runs
// (podconfig.ConfigHashHeader), so that a client measuring the route can
// tell an answer of the config it measures from one of a replica still
// running the old one. No hash (a route run by hand): no header.
func withConfigHash(hash string, next http.Handler) http.Handler {
	if hash == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(podconfig.ConfigHashHeader, hash)
		next.ServeHTTP(w, r)
	})
}
