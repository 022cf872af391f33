package serving

import (
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/server"
)

// A route config without limits (one rendered before they existed) runs
// with the same turn limits the operator renders by default.
func TestTurnLimitDefaultsMatchTheAPI(t *testing.T) {
	got := routeLimits(podconfig.Limits{})
	if got.ConcurrentTurnsPerUser != v1alpha1.DefaultConcurrentTurnsPerUser ||
		got.TurnsPerMinutePerUser != v1alpha1.DefaultTurnsPerMinutePerUser ||
		got.MaxInFlightTurns != v1alpha1.DefaultMaxInFlightTurns {
		t.Errorf("runtime defaults %d/%d/%d, API %d/%d/%d", got.ConcurrentTurnsPerUser, got.TurnsPerMinutePerUser, got.MaxInFlightTurns,
			v1alpha1.DefaultConcurrentTurnsPerUser, v1alpha1.DefaultTurnsPerMinutePerUser, v1alpha1.DefaultMaxInFlightTurns)
	}
	set := routeLimits(podconfig.Limits{ConcurrentTurnsPerUser: 2, TurnsPerMinutePerUser: 6, MaxInFlightTurns: 50})
	if set.ConcurrentTurnsPerUser != 2 || set.TurnsPerMinutePerUser != 6 || set.MaxInFlightTurns != 50 {
		t.Errorf("the route's limits did not reach the server: %+v", set)
	}
	if set.BodyBytes != server.DefaultLimits().BodyBytes {
		t.Errorf("the other limits changed: %+v", set)
	}
}
