package serving

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/seal"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// newFeedback keeps answered turns and verdicts in the turn log's
// backend; nil when the route takes no feedback. A turn can be rated for
// as long as the turn log keeps it (turns.retention).
func newFeedback(cfg podconfig.RouteConfig, rdb *redis.Client, sealer *seal.Sealer) turnlog.Feedback {
	if !cfg.Feedback.Enabled {
		return nil
	}
	if cfg.Turns.Backend == podconfig.BackendRedis {
		return turnlog.NewRedisFeedback(rdb, sealer, redisPrefix(cfg), cfg.Turns.Retention.Std(), cfg.Feedback.Retention.Std(), time.Now)
	}
	return turnlog.NewMemoryFeedback(cfg.Turns.Retention.Std(), cfg.Feedback.Retention.Std(), 0, time.Now)
}

// OpenFeedback is the route's feedback store as its pods reach it, for
// `ragroute feedback export`: the route's Redis, with the route's own
// credentials and seal key from secrets. Feedback kept in a replica's
// memory is readable by no other process: that is an error, as is a
// route that takes no feedback. close releases the connection.
func OpenFeedback(ctx context.Context, cfg podconfig.RouteConfig, secrets assembly.Secrets) (store turnlog.Feedback, release func(), err error) {
	if !cfg.Feedback.Enabled {
		return nil, nil, errors.New("the route takes no feedback (spec.feedback.enabled is false)")
	}
	if cfg.Turns.Backend != podconfig.BackendRedis {
		return nil, nil, errors.New("the route keeps feedback in each replica's memory (spec.turns.backend memory), which no other process can read: export needs spec.turns.backend redis")
	}
	var open closers
	sealer, err := newSealer(cfg.Redis, secrets)
	if err != nil {
		return nil, nil, err
	}
	rdb, err := newRedis(cfg.Redis, secrets, redisCommandPool, &open)
	if err != nil {
		open.close()
		return nil, nil, err
	}
	if err := pingRedis(ctx, rdb, cfg.Redis); err != nil {
		open.close()
		return nil, nil, err
	}
	return newFeedback(cfg, rdb, sealer), open.close, nil
}
