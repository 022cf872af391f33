package controller

import (
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// The turn limits written on a QueryRoute reach its pods' config; the
// ones left out keep their defaults.
func TestRouteLimitsAreRendered(t *testing.T) {
	route := newRoute("acme", "support", "docs", "default")
	route.Spec.Limits = &v1alpha1.RouteLimits{ConcurrentTurnsPerUser: 2, TurnsPerMinutePerUser: 6, MaxSearchesInFlight: 3}
	cfg := renderRouteConfig(routeInputs{route: route, store: newStore("acme", "docs", "http://milvus:19530"), promptName: "p"})
	want := podconfig.Limits{ConcurrentTurnsPerUser: 2, TurnsPerMinutePerUser: 6, MaxInFlightTurns: v1alpha1.DefaultMaxInFlightTurns, MaxSearchesInFlight: 3}
	if cfg.Limits != want {
		t.Errorf("rendered limits %+v, want %+v", cfg.Limits, want)
	}
}
