package serving

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/server"
	"github.com/ragroute/ragroute/internal/route/ui"
	"github.com/ragroute/ragroute/internal/route/vectorcache"
)

// Route is a route wired from its config for `ragroute serve`: the query
// API's options, the generation watch its cache keys depend on, and what
// it holds open.
type Route struct {
	API        *server.Options
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
	store, closeStore, err := assembly.OpenStore(ctx, cfg.Store.Milvus, cfg.Store.Embedding, cfg.Store.Search.Lexical, secrets)
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
	rt.Generation = &retrieval.GenerationWatch{Index: store, Logger: logger, Embedder: assembly.EmbedderInfo(cfg.Store.Embedding),
		Analyzer: store.AnalyzerID()}
	// The embedder client the questions and the check share is the
	// assembly's: built from the config, as for every route it assembles.
	parts := assembly.Parts{Index: store, Generation: rt.Generation, Secrets: secrets, Logger: logger}
	if cfg.Cache.Backend == podconfig.BackendRedis {
		parts.Cache = retrieval.NewRedisCache(rdb, sealer, redisPrefix(cfg), cfg.Cache.TTL.Std())
		parts.Vectors = vectorcache.NewRedis(rdb, sealer, redisPrefix(cfg), vectorTTL)
	}
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
	runner, err := assembly.NewEngine(cfg, searcher, parts)
	if err != nil {
		return nil, err
	}
	turns, err := newTurnLog(cfg, rdb, sealer, secrets, &rt.open)
	if err != nil {
		return nil, err
	}
	rt.API = &server.Options{
		Engine:             runner,
		Searcher:           searcher,
		Log:                turns,
		Feedback:           newFeedback(cfg, rdb, sealer),
		Auth:               auth,
		Limits:             routeLimits(cfg.Limits),
		Logger:             logger,
		Ready:              func(ctx context.Context) error { return indexServes(ctx, rt.Generation) },
		ModelHealth:        modelHealth,
		UpstreamRetries:    upstreamRetries(chat, searcher),
		ModelID:            cfg.Route.Name,
		CORSAllowedOrigins: cfg.Server.CORSAllowedOrigins,
	}
	if sealer != nil {
		rt.API.RedisRejected = sealer.Rejected
	}
	if cfg.UI.Enabled {
		rt.API.Page = ui.Handler(cfg.Feedback.Enabled)
	}
	if cfg.MCP.Enabled {
		rt.API.MCP = mcpOptions(cfg)
	}
	return rt, nil
}
