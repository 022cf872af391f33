package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/routeconfig"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// Runtime is a route built from its rendered config: the HTTP server and
// what it holds open.
type Runtime struct {
	Server *Server
	store  *knowledge.Store
	closer func()
	gen    atomic.Int64
	logger *slog.Logger
}

// unsupported lists settings this version of the runtime refuses rather
// than silently ignores.
func unsupported(cfg routeconfig.Config) error {
	var errs []error
	if (cfg.Cache.Backend == "redis" || cfg.Turns.Backend == "redis") && cfg.Redis == nil {
		errs = append(errs, errors.New("a redis backend needs redis.address"))
	}
	if cfg.Rerank.Mode == "crossEncoder" && cfg.Rerank.CrossEncoder == nil {
		errs = append(errs, errors.New("rerank.mode crossEncoder needs rerank.crossEncoder"))
	}
	if cfg.Mode != "singleRound" {
		errs = append(errs, fmt.Errorf("mode %q is not supported yet (use singleRound)", cfg.Mode))
	}
	return errors.Join(errs...)
}

// NewRuntime connects to Milvus and wires a route from cfg. Secrets come
// from the environment variables cfg names.
func NewRuntime(ctx context.Context, cfg routeconfig.Config, logger *slog.Logger) (*Runtime, error) {
	if err := unsupported(cfg); err != nil {
		return nil, fmt.Errorf("route %s/%s: %w", cfg.Route.Namespace, cfg.Route.Name, err)
	}
	m := cfg.Store.Milvus
	dialCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	client, err := knowledge.Connect(dialCtx, knowledge.Connection{URI: m.URI, Database: m.Database, Token: env(m.TokenEnv),
		TLSServerName: m.TLSServerName, TLSInsecureSkipVerify: m.TLSInsecureSkipVerify})
	cancel()
	if err != nil {
		return nil, err
	}
	rt := &Runtime{store: knowledge.NewStore(client, m.Collection, int(cfg.Store.Embedding.Dimensions)), logger: logger,
		closer: func() { _ = client.Close(context.Background()) }}
	var rdb *redis.Client
	if cfg.Redis != nil {
		rdb = redis.NewClient(&redis.Options{Addr: cfg.Redis.Address, DB: int(cfg.Redis.DB), Password: env(cfg.Redis.PasswordEnv),
			DialTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second})
		closeMilvus := rt.closer
		rt.closer = func() { closeMilvus(); _ = rdb.Close() }
	}
	// One prefix per route: routes may share a Redis.
	prefix := "ragroute:" + cfg.Route.Namespace + "/" + cfg.Route.Name + ":"

	ttl, err := time.ParseDuration(cfg.Cache.TTL)
	if err != nil {
		return nil, fmt.Errorf("cache.ttl: %w", err)
	}
	retention, err := time.ParseDuration(cfg.Turns.Retention)
	if err != nil {
		return nil, fmt.Errorf("turns.retention: %w", err)
	}
	var primitives []knowledge.Primitive
	for _, p := range cfg.Store.Search.Primitives {
		primitives = append(primitives, knowledge.Primitive(p))
	}
	e := cfg.Store.Embedding
	searcher := &Searcher{
		Index: rt.store,
		Embedder: model.NewEmbeddings(model.EmbeddingsConfig{BaseURL: e.BaseURL, Model: e.Model, APIKey: env(e.APIKeyEnv),
			Dimensions: int(e.Dimensions), MaxInputTokens: int(e.MaxInputTokens)}),
		Reranker: KeepOrder{},
		Cache:    NewMemoryCache(int(cfg.Cache.MaxEntries), ttl, time.Now),
		Settings: SearchSettings{
			Primitives: primitives, Candidates: int(cfg.Store.Search.Candidates), RRFK: int(cfg.Store.Search.RRFK),
			SimilarityFloor: cfg.Retrieval.SimilarityFloor, StrictFloor: cfg.Retrieval.StrictFloor, MaxFragments: int(cfg.Retrieval.MaxFragments),
		},
		Generation: rt.gen.Load,
	}
	if cfg.Cache.Backend == "redis" {
		searcher.Cache = NewRedisCache(rdb, prefix, ttl)
	}
	if ce := cfg.Rerank.CrossEncoder; cfg.Rerank.Mode == "crossEncoder" {
		searcher.Reranker = &CrossEncoder{BaseURL: ce.BaseURL, Model: ce.Model, APIKey: env(ce.APIKeyEnv), TopN: int(ce.TopN),
			HTTP: &http.Client{Timeout: 30 * time.Second}}
	}
	var turnLog TurnLog = NewMemoryTurnLog(retention, 10000, time.Now)
	if cfg.Turns.Backend == "redis" {
		turnLog = NewRedisTurnLog(rdb, prefix, retention)
	}
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		return nil, err
	}
	chat := model.NewChat(model.ChatConfig{BaseURL: cfg.Model.BaseURL, Model: cfg.Model.Name, APIKey: env(cfg.Model.APIKeyEnv),
		Temperature: cfg.Model.Temperature, MaxTokens: int(cfg.Model.MaxTokens)})
	auth, err := authenticator(cfg.Auth)
	if err != nil {
		return nil, err
	}
	runner := &Runner{Chat: chat, Searcher: searcher, Policy: cfg.Model.SearchPolicy, Tokens: tokens,
		ContextTokens: int(cfg.Window.ContextTokens), AnswerReserve: int(cfg.Window.AnswerReserveTokens),
		Prompt: Prompt{Platform: cfg.Prompt.Platform, NotFound: cfg.Prompt.NotFound, Styles: cfg.Prompt.Styles}}
	if ws := cfg.WebSearch; ws != nil {
		runner.WebSearch = &WebSearch{BaseURL: ws.BaseURL, APIKey: env(ws.APIKeyEnv), MaxResults: 5, HTTP: &http.Client{Timeout: 30 * time.Second}}
	}
	rt.Server = &Server{
		Runner:   runner,
		Searcher: searcher,
		Log:      turnLog,
		Auth:     auth,
		Limits:   DefaultLimits(),
		Logger:   logger,
		Ready:    func(ctx context.Context) error { return rt.ready(ctx, cfg.Model.BaseURL) },
	}
	return rt, nil
}

func authenticator(a routeconfig.Auth) (Authenticator, error) {
	switch {
	case a.TrustedProxy != nil:
		return ProxyHeaders{UserHeader: a.TrustedProxy.UserHeader, GroupsHeader: a.TrustedProxy.GroupsHeader}, nil
	case a.JWT != nil:
		return &JWTVerifier{Issuer: a.JWT.Issuer, Audience: a.JWT.Audience, JWKSURL: a.JWT.JWKSURL,
			UserClaim: a.JWT.UserClaim, GroupsClaim: a.JWT.GroupsClaim,
			HTTP: &http.Client{Timeout: 10 * time.Second}, Refresh: time.Minute}, nil
	}
	return nil, errors.New("auth: no authenticator configured")
}

// WatchGeneration keeps the index generation (part of every cache key)
// current, so a rebuilt index never serves cached fragments of the old one.
func (rt *Runtime) WatchGeneration(ctx context.Context, every time.Duration) {
	refresh := func() {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if gen, ok, err := rt.store.Active(c); err == nil && ok {
			rt.gen.Store(gen.Number)
		} else if err != nil {
			rt.logger.Warn("read index generation", "error", err)
		}
	}
	refresh()
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			refresh()
		}
	}
}

// ready: an index serves the alias and the chat model's server answers.
func (rt *Runtime) ready(ctx context.Context, modelURL string) error {
	if _, ok, err := rt.store.Active(ctx); err != nil || !ok {
		return fmt.Errorf("no index serves the collection alias (err=%v)", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(modelURL, "/")+"/models", nil)
	if err != nil {
		return err
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

// Close releases the Milvus connection.
func (rt *Runtime) Close() { rt.closer() }

func env(name string) string {
	if name == "" {
		return ""
	}
	return os.Getenv(name)
}
