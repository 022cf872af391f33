package main

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

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/api"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/seal"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/route/ui"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// routeRuntime is a route wired from its config: the API server, the
// generation watch its cache keys depend on, and what it holds open.
type routeRuntime struct {
	server     *api.Options
	generation *retrieval.GenerationWatch
	open       closers
}

// close releases the route's connections.
func (rt *routeRuntime) close() { rt.open.close() }

// newRouteRuntime connects to the route's backends and wires its turn and
// API from cfg, refused unless valid. On any error, whatever was opened is
// closed.
func newRouteRuntime(ctx context.Context, cfg podconfig.RouteConfig, env environment, logger *slog.Logger) (_ *routeRuntime, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("route %s/%s: %w", cfg.Route.Namespace, cfg.Route.Name, err)
	}
	rt := &routeRuntime{}
	defer func() {
		if err != nil {
			rt.close()
		}
	}()
	store, err := openStore(ctx, cfg.Store.Milvus, cfg.Store.Embedding, env, &rt.open)
	if err != nil {
		return nil, err
	}
	sealer, err := newSealer(cfg.Redis, env)
	if err != nil {
		return nil, err
	}
	rdb, err := newRedis(cfg.Redis, env, redisCommandPool, &rt.open)
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
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		return nil, fmt.Errorf("chat token counter: %w", err)
	}
	auth, err := authenticator(cfg.Auth, env)
	if err != nil {
		return nil, err
	}
	rt.generation = &retrieval.GenerationWatch{Index: store, Logger: logger, Embedder: routeEmbedder(cfg.Store.Embedding)}
	searcher := newSearcher(cfg, store, env, rdb, sealer, rt.generation, logger)
	var chat *model.Chat
	var modelHealth func(ctx context.Context) error
	if cfg.Model.BaseURL != "" {
		chat = newChat(cfg.Model, env)
		// The model is shared by every replica: its health is a metric,
		// not readiness, so a blip does not empty the Service.
		modelHealth = func(ctx context.Context) error { return modelAnswers(ctx, cfg.Model.BaseURL) }
	}
	runner := &route.Runner{
		Searcher: searcher, Policy: cfg.Model.SearchPolicy, Tokens: tokens,
		ContextTokens: int(cfg.Window.ContextTokens), AnswerReserve: int(cfg.Window.AnswerReserveTokens),
		Prompt:               route.Prompt{Platform: cfg.Prompt.Platform, NotFound: cfg.Prompt.NotFound, Styles: cfg.Prompt.Styles},
		MaxToolCallsPerRound: int(cfg.Model.MaxToolCallsPerRound),
		FlaggedFragments:     cfg.Retrieval.FlaggedFragments,
		Mode:                 cfg.Mode,
		ToolProtocol:         cfg.ToolProtocol,
		AnswerMode:           cfg.Answer.Mode,
		Grounding: answer.GroundingSettings{Policy: cfg.Answer.Grounding.Policy, Threshold: cfg.Answer.Grounding.SupportThreshold,
			FallbackBelow: cfg.Answer.Grounding.FallbackBelow},
		Research:      cfg.Retrieval.Research,
		ResearchBelow: cfg.Retrieval.ResearchBelow,
		Logger:        logger,
	}
	var checkEmbedder model.Embedder
	runner.Check, checkEmbedder = newChecker(cfg, env, rdb, sealer)
	if chat != nil {
		runner.Chat = chat // never a typed nil: Runner checks for no model
	}
	if ws := cfg.WebSearch; ws != nil {
		runner.WebSearch = &retrieval.WebSearch{BaseURL: ws.BaseURL, APIKey: env.secret(ws.APIKeyEnv), MaxResults: 5,
			HTTP: &http.Client{Timeout: 30 * time.Second}}
	}
	turns, err := newTurnLog(cfg, rdb, sealer, env, &rt.open)
	if err != nil {
		return nil, err
	}
	rt.server = &api.Options{
		Runner:             runner,
		Searcher:           searcher,
		Log:                turns,
		Auth:               auth,
		Limits:             routeLimits(cfg.Limits),
		Logger:             logger,
		Ready:              func(ctx context.Context) error { return indexServes(ctx, rt.generation) },
		ModelHealth:        modelHealth,
		UpstreamRetries:    upstreamRetries(chat, searcher, checkEmbedder),
		ModelID:            cfg.Route.Name,
		CORSAllowedOrigins: cfg.Server.CORSAllowedOrigins,
	}
	if sealer != nil {
		rt.server.RedisRejected = sealer.Rejected
	}
	if cfg.UI.Enabled {
		rt.server.Page = ui.Handler()
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
func redisPrefix(cfg podconfig.RouteConfig) string {
	return "ragroute:" + cfg.Route.Namespace + "/" + cfg.Route.Name + ":"
}

// newSearcher is the body of search_knowledge as the route's config sets it.
func newSearcher(cfg podconfig.RouteConfig, store *knowledge.Store, env environment, rdb *redis.Client, sealer *seal.Sealer,
	gen *retrieval.GenerationWatch, logger *slog.Logger) *retrieval.Searcher {
	var primitives []knowledge.Primitive
	weights := map[knowledge.Primitive]float64{}
	for _, p := range cfg.Store.Search.Primitives {
		primitives = append(primitives, knowledge.Primitive(p))
	}
	for p, w := range cfg.Store.Search.Weights {
		weights[knowledge.Primitive(p)] = w
	}
	searcher := &retrieval.Searcher{
		Index:    store,
		Embedder: newQueryEmbedder(cfg.Store.Embedding, env, queryEmbedTimeout),
		Reranker: retrieval.KeepOrder{},
		Cache:    retrieval.NewMemoryCache(int(cfg.Cache.MaxEntries), cfg.Cache.TTL.Std(), time.Now),
		Settings: retrieval.SearchSettings{
			Primitives: primitives, Candidates: int(cfg.Store.Search.Candidates), RRFK: int(cfg.Store.Search.RRFK),
			SimilarityFloor: cfg.Retrieval.SimilarityFloor, StrictFloor: cfg.Retrieval.StrictFloor,
			MaxFragments: int(cfg.Retrieval.MaxFragments), Weights: weights, MinConfidence: cfg.Retrieval.MinConfidence,
			Diversity: retrieval.Diversity{MaxPerDocument: int(cfg.Retrieval.Diversity.MaxPerDocument),
				Margin: cfg.Retrieval.Diversity.Margin, Dominance: cfg.Retrieval.Diversity.Dominance},
		},
		Generation:       gen.Load,
		EmbedderMismatch: gen.Mismatch,
		Timeouts: retrieval.Timeouts{Embed: cfg.Timeouts.Embed.Std(), Search: cfg.Timeouts.Search.Std(),
			Rerank: cfg.Timeouts.Rerank.Std()},
		Background: func() *knowledge.Background {
			if g, ok := gen.Serving(); ok {
				return g.Background
			}
			return nil
		},
	}
	if r := cfg.Retrieval; r.SimilarityFloorSigmas != nil || r.StrictFloorSigmas != nil {
		floors := &retrieval.RelativeFloors{
			Similarity: r.SimilarityFloor, Strict: r.StrictFloor,
			SimilaritySigmas: r.SimilarityFloorSigmas, StrictSigmas: r.StrictFloorSigmas,
			Serving: gen.Serving, Logger: logger,
		}
		searcher.Floors = floors.Floors
	}
	if cfg.Cache.Backend == podconfig.BackendRedis {
		searcher.Cache = retrieval.NewRedisCache(rdb, sealer, redisPrefix(cfg), cfg.Cache.TTL.Std())
	}
	if ce := cfg.Rerank.CrossEncoder; cfg.Rerank.Mode == podconfig.RerankCrossEncoder {
		searcher.Reranker = &retrieval.CrossEncoder{BaseURL: ce.BaseURL, Model: ce.Model, APIKey: env.secret(ce.APIKeyEnv),
			TopN: int(ce.TopN), FirstStageWeight: ce.FirstStageWeight, HTTP: &http.Client{Timeout: 30 * time.Second}}
	}
	return searcher
}

// newTurnLog keeps turn events in memory, or in Redis across replicas.
func newTurnLog(cfg podconfig.RouteConfig, rdb *redis.Client, sealer *seal.Sealer, env environment, open *closers) (turnlog.Log, error) {
	if cfg.Turns.Backend == podconfig.BackendRedis {
		log := turnlog.NewRedis(rdb, sealer, redisPrefix(cfg), cfg.Turns.Retention.Std())
		waits, err := newRedis(cfg.Redis, env, redisWaitPool, open)
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
func authenticator(a podconfig.Auth, env environment) (identity.Authenticator, error) {
	switch {
	case a.TrustedProxy != nil:
		p := a.TrustedProxy
		proxy := identity.ProxyHeaders{UserHeader: p.UserHeader, GroupsHeader: p.GroupsHeader}
		if p.SecretEnv != "" {
			// A missing secret must not turn into "trust any caller".
			secret := env.secret(p.SecretEnv)
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

// routeEmbedder is the embedder the route embeds questions with, as the
// serving generation must have recorded it.
func routeEmbedder(e podconfig.Embedding) knowledge.EmbedderInfo {
	return knowledge.EmbedderInfo{Model: e.Model, Dimensions: int(e.Dimensions), QueryPrefix: e.QueryPrefix, DocumentPrefix: e.DocumentPrefix}
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
