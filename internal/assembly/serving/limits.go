package serving

import (
	"cmp"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/server"
)

// routeLimits are the API's limits with the route's turn limits; a limit
// the config leaves at zero keeps its default.
func routeLimits(l podconfig.Limits) server.Limits {
	limits := server.DefaultLimits()
	limits.ConcurrentTurnsPerUser = cmp.Or(int(l.ConcurrentTurnsPerUser), limits.ConcurrentTurnsPerUser)
	limits.TurnsPerMinutePerUser = cmp.Or(int(l.TurnsPerMinutePerUser), limits.TurnsPerMinutePerUser)
	limits.MaxInFlightTurns = cmp.Or(int(l.MaxInFlightTurns), limits.MaxInFlightTurns)
	return limits
}
