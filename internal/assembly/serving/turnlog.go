package serving

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/seal"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// newTurnLog keeps turn events in memory, or in Redis across replicas.
func newTurnLog(cfg podconfig.RouteConfig, rdb *redis.Client, sealer *seal.Sealer, secrets assembly.Secrets, open *closers) (turnlog.Log, error) {
	if cfg.Turns.Backend == podconfig.BackendRedis {
		log := turnlog.NewRedis(rdb, sealer, redisPrefix(cfg), cfg.Turns.Retention.Std())
		waits, err := newRedis(cfg.Redis, secrets, redisWaitPool, open)
		if err != nil {
			return nil, err
		}
		log.Waits = waits
		return log, nil
	}
	// Room for every turn the replica may run at once: only running turns
	// can fill the log (finished ones give way), within the byte budget.
	maxTurns := max(10000, int(cfg.Limits.MaxInFlightTurns))
	return turnlog.NewMemory(cfg.Turns.Retention.Std(), maxTurns, cfg.Turns.MaxMemoryBytes, time.Now), nil
}
