package serving

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/api"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/seal"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/route/ui"
)

// Route is a route wired from its config for `ragroute serve`: the query
// API's options, the generation watch its cache keys depend on, and what
// it holds open.
type Route struct {
	API        *api.Options
	Generation *retrieval.GenerationWatch
	open       closers
}

// Close releases the route's connections.
func (rt *Route) Close() { rt.open.close() }

// Open connects to the route's backends and wires its turn and API from
// cfg, refused unless valid. On any error, whatever was opened is closed.
func Open(ctx context.Context, cfg podconfig.RouteConfig, secrets assembly.Secrets, logger *slog.Logger) (_ *Route, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("route %s/%s: %w", cfg.Route.Namespace, cfg.Route.Name, err)
	}
	rt := &Route{}
	defer func() {
		if err != nil {
			rt.Close()
		}
	}()
	store, closeStore, err := assembly.OpenStore(ctx, cfg.Store.Milvus, cfg.Store.Embedding, secrets)
	if err != nil {
		return nil, err
	}
	rt.open.add(closeStore)
	sealer, err := newSealer(cfg.Redis, secrets)
	if err != nil {
		return nil, err
	}
	rdb, err := newRedis(cfg.Redis, secrets, redisCommandPool, &rt.open)
	if err != nil {
		return nil, err
	}
	if rdb != nil {
		// Redis is not readiness (a blip would empty the Service), but a
		// wrong CA, user or password should be said at once.
		if err := pingRedis(ctx, rdb, cfg.Redis); err != nil {
			logger.Warn("the route cannot use its Redis yet", "err", err)
		}
	}
	auth, err := authenticator(cfg.Auth, secrets)
	if err != nil {
		return nil, err
	}
	rt.Generation = &retrieval.GenerationWatch{Index: store, Logger: logger, Embedder: assembly.EmbedderInfo(cfg.Store.Embedding)}
	parts := assembly.Parts{Index: store, Generation: rt.Generation, Secrets: secrets, Logger: logger}
	var vectors retrieval.VectorCache
	if cfg.Cache.Backend == podconfig.BackendRedis {
		parts.Cache = retrieval.NewRedisCache(rdb, sealer, redisPrefix(cfg), cfg.Cache.TTL.Std())
		vectors = retrieval.NewRedisVectorCache(rdb, sealer, redisPrefix(cfg), vectorTTL)
	}
	check, checkEmbedder := assembly.Checker(cfg, secrets, vectors)
	parts.Check = &check
	var chat *model.Chat
	var modelHealth func(ctx context.Context) error
	if cfg.Model.BaseURL != "" {
		chat = assembly.Chat(cfg.Model, secrets)
		parts.Chat = chat
		// The model is shared by every replica: its health is a metric,
		// not readiness, so a blip does not empty the Service.
		modelHealth = func(ctx context.Context) error { return modelAnswers(ctx, cfg.Model.BaseURL) }
	}
	searcher := assembly.NewSearcher(cfg, parts)
	runner, err := assembly.NewRunner(cfg, searcher, parts)
	if err != nil {
		return nil, err
	}
	turns, err := newTurnLog(cfg, rdb, sealer, secrets, &rt.open)
	if err != nil {
		return nil, err
	}
	rt.API = &api.Options{
		Runner:             runner,
		Searcher:           searcher,
		Log:                turns,
		Auth:               auth,
		Limits:             routeLimits(cfg.Limits),
		Logger:             logger,
		Ready:              func(ctx context.Context) error { return indexServes(ctx, rt.Generation) },
		ModelHealth:        modelHealth,
		UpstreamRetries:    upstreamRetries(chat, searcher, checkEmbedder),
		ModelID:            cfg.Route.Name,
		CORSAllowedOrigins: cfg.Server.CORSAllowedOrigins,
	}
	if sealer != nil {
		rt.API.RedisRejected = sealer.Rejected
	}
	if cfg.UI.Enabled {
		rt.API.Page = ui.Handler()
	}
	return rt, nil
}

// upstreamRetries reads the retry counts of the route's model clients:
// the grounding check's embedder client counts as the embedder.
func upstreamRetries(chat *model.Chat, searcher *retrieval.Searcher, check model.Embedder) map[string]func() int64 {
	retries := map[string]func() int64{}
	if chat != nil {
		retries["chat"] = chat.Retries
	}
	query, _ := searcher.Embedder.(model.RetryCounter)
	background, _ := check.(model.RetryCounter)
	if query != nil || background != nil {
		retries["embedder"] = func() int64 {
			var n int64
			for _, c := range []model.RetryCounter{query, background} {
				if c != nil {
					n += c.Retries()
				}
			}
			return n
		}
	}
	if counter, ok := searcher.Reranker.(model.RetryCounter); ok {
		retries["reranker"] = counter.Retries
	}
	return retries
}

// redisPrefix keeps routes that share a Redis apart.
// vectorTTL lets unused vectors of the grounding check go from Redis;
// none goes stale.
const vectorTTL = 24 * time.Hour

func redisPrefix(cfg podconfig.RouteConfig) string {
	return "ragroute:" + cfg.Route.Namespace + "/" + cfg.Route.Name + ":"
}

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
	// can fill the log (finished ones give way).
	maxTurns := max(10000, int(cfg.Limits.MaxInFlightTurns))
	return turnlog.NewMemory(cfg.Turns.Retention.Std(), maxTurns, time.Now), nil
}

// routeLimits are the API's limits with the route's turn limits; a limit
// the config leaves at zero keeps its default.
func routeLimits(l podconfig.Limits) api.Limits {
	limits := api.DefaultLimits()
	limits.ConcurrentTurnsPerUser = cmp.Or(int(l.ConcurrentTurnsPerUser), limits.ConcurrentTurnsPerUser)
	limits.TurnsPerMinutePerUser = cmp.Or(int(l.TurnsPerMinutePerUser), limits.TurnsPerMinutePerUser)
	limits.MaxInFlightTurns = cmp.Or(int(l.MaxInFlightTurns), limits.MaxInFlightTurns)
	return limits
}

// authenticator establishes identities as the route's auth says.
func authenticator(a podconfig.Auth, secrets assembly.Secrets) (identity.Authenticator, error) {
	switch {
	case a.TrustedProxy != nil:
		p := a.TrustedProxy
		proxy := identity.ProxyHeaders{UserHeader: p.UserHeader, GroupsHeader: p.GroupsHeader}
		if p.SecretEnv != "" {
			// A missing secret must not turn into "trust any caller".
			secret := secrets.Get(p.SecretEnv)
			if secret == "" {
				return nil, fmt.Errorf("auth: the proxy secret (environment variable %s) is empty", p.SecretEnv)
			}
			proxy.SecretHeader, proxy.Secret = p.SecretHeader, []byte(secret)
		}
		return proxy, nil
	case a.JWT != nil:
		// Discovery (or the explicit JWKS) runs in the background: an
		// unreachable issuer refuses tokens, it never holds the start.
		v := &identity.JWTVerifier{Issuer: a.JWT.Issuer, Audience: a.JWT.Audience, JWKSURL: a.JWT.JWKSURL,
			UserClaim: a.JWT.UserClaim, GroupsClaim: a.JWT.GroupsClaim,
			HTTP: &http.Client{Timeout: 10 * time.Second}, Refresh: time.Minute, Timeout: 10 * time.Second}
		v.Start()
		return v, nil
	}
	return nil, errors.New("auth: no authenticator configured")
}

// indexServes is the route's readiness: an index serves the collection
// alias in Milvus ("milvus"), built by the route's embedder ("embedder").
// Each check reads the serving generation into the watch, so the route
// follows a swapped-in generation within a probe period.
func indexServes(ctx context.Context, watch *retrieval.GenerationWatch) error {
	ok, err := watch.Read(ctx)
	var mismatch *retrieval.EmbedderMismatchError
	switch {
	case errors.As(err, &mismatch):
		return &api.NotReadyError{Dependency: "embedder", Err: err}
	case err != nil || !ok:
		return &api.NotReadyError{Dependency: "milvus", Err: fmt.Errorf("no index serves the collection alias (err=%v)", err)}
	}
	return nil
}

// modelAnswers says whether the chat model's server answers.
func modelAnswers(ctx context.Context, modelURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(modelURL, "/")+"/models", nil)
	if err != nil {
		return fmt.Errorf("chat model at %s: %w", modelURL, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("chat model at %s: %w", modelURL, err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return fmt.Errorf("chat model at %s: %s", modelURL, resp.Status)
	}
	return nil
}
