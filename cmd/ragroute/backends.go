package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/seal"
)

// The clients of ragroute's pods are built here, once, for serve, ingest
// and eval alike; secrets are read from the environment here and nowhere
// else, and the internal packages get plain values.

// environment looks up the variables a pod config names.
type environment func(name string) string

// secret is the value of the variable name, or nothing when the config
// names none.
func (env environment) secret(name string) string {
	if name == "" {
		return ""
	}
	return env(name)
}

// closers releases what a command opened, last first.
type closers []func()

func (c *closers) add(release func()) { *c = append(*c, release) }

func (c closers) close() {
	for i := len(c) - 1; i >= 0; i-- {
		c[i]()
	}
}

// milvusDialTimeout bounds connecting to Milvus.
const milvusDialTimeout = 30 * time.Second

// connectMilvus dials the Milvus a config names; the caller closes it.
func connectMilvus(ctx context.Context, m podconfig.Milvus, env environment) (*milvusclient.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, milvusDialTimeout)
	defer cancel()
	client, err := knowledge.Connect(ctx, knowledge.Connection{
		URI: m.URI, Database: m.Database, Token: env.secret(m.TokenEnv),
		TLSServerName: m.TLSServerName, TLSInsecureSkipVerify: m.TLSInsecureSkipVerify,
	})
	if err != nil {
		return nil, fmt.Errorf("connect to Milvus: %w", err)
	}
	return client, nil
}

// openStore connects to the store behind a config's collection alias and
// registers the connection with open.
func openStore(ctx context.Context, m podconfig.Milvus, e podconfig.Embedding, env environment, open *closers) (*knowledge.Store, error) {
	client, err := connectMilvus(ctx, m, env)
	if err != nil {
		return nil, err
	}
	open.add(func() { _ = client.Close(context.Background()) })
	return knowledge.NewStore(client, m.Collection, int(e.Dimensions)).WithOwner(m.Owner), nil
}

// Time limits of one embedding request: a query is one short text; an
// ingestion batch is dozens of chunks, which a CPU-only embedder on a busy
// node can take minutes over.
const (
	queryEmbedTimeout = time.Minute
	batchEmbedTimeout = 10 * time.Minute
)

// newEmbedder is a store's embedder without input prefixes; timeout
// bounds one request. Serve and ingest use newQueryEmbedder and
// newDocumentEmbedder, which add the store's prefixes to it.
func newEmbedder(e podconfig.Embedding, env environment, timeout time.Duration) *model.Embeddings {
	return model.NewEmbeddings(model.EmbeddingsConfig{
		BaseURL: e.BaseURL, Model: e.Model, APIKey: env.secret(e.APIKeyEnv),
		Dimensions: int(e.Dimensions), MaxInputTokens: int(e.MaxInputTokens), Timeout: timeout,
	})
}

// newQueryEmbedder embeds questions as the store's model expects them:
// behind its query prefix, cut so that prefix and question fit its input.
func newQueryEmbedder(e podconfig.Embedding, env environment, timeout time.Duration) knowledge.Embedder {
	return newPrefixedEmbedder(e, e.QueryPrefix, env, timeout)
}

// newDocumentEmbedder embeds chunk texts and titles behind the store's
// document prefix, cut so that prefix and text fit the model's input.
func newDocumentEmbedder(e podconfig.Embedding, env environment, timeout time.Duration) knowledge.Embedder {
	return newPrefixedEmbedder(e, e.DocumentPrefix, env, timeout)
}

// newPrefixedEmbedder puts prefix in front of every input. With a prefix
// the wrapper cuts each text to leave it room, so the client need not
// tokenize it a second time.
func newPrefixedEmbedder(e podconfig.Embedding, prefix string, env environment, timeout time.Duration) knowledge.Embedder {
	if prefix == "" {
		return newEmbedder(e, env, timeout)
	}
	limit := e.MaxInputTokens
	e.MaxInputTokens = 0
	return model.WithPrefix(newEmbedder(e, env, timeout), prefix, int(limit))
}

// newChat is the route's chat model.
func newChat(m podconfig.ChatModel, env environment) *model.Chat {
	return model.NewChat(model.ChatConfig{
		BaseURL: m.BaseURL, Model: m.Name, APIKey: env.secret(m.APIKeyEnv),
		Temperature: m.Temperature, MaxTokens: int(m.MaxTokens), IdleTimeout: m.IdleTimeout.Std(),
	})
}

// Connection pools of the route's Redis clients: commands (cache, turn
// writes) use go-redis' default size (10 per CPU); the blocking reads of
// waiting SSE streams hold a connection each for up to the keep-alive
// interval, so they get their own, larger pool and never starve writes.
const (
	redisCommandPool = 0
	redisWaitPool    = 1024
)

// redisPingTimeout bounds the check of the route's Redis at start.
const redisPingTimeout = 5 * time.Second

// newRedis is a client of the route's shared Redis with a pool of poolSize
// connections (0: the default), or nil when the route names no Redis; it
// registers the client with open. A TLS connection verifies Redis'
// certificate against the CAs of the config's CA variable (the system's
// roots when none), at TLS 1.2 or later.
func newRedis(r *podconfig.Redis, env environment, poolSize int, open *closers) (*redis.Client, error) {
	if r == nil {
		return nil, nil
	}
	opts := &redis.Options{
		Addr: r.Address, DB: int(r.DB), Username: r.Username, Password: env.secret(r.PasswordEnv),
		DialTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second, PoolSize: poolSize,
	}
	if t := r.TLS; t != nil {
		config, err := redisTLS(t, r.Address, env)
		if err != nil {
			return nil, err
		}
		opts.TLSConfig = config
	}
	client := redis.NewClient(opts)
	open.add(func() { _ = client.Close() })
	return client, nil
}

// redisTLS is the TLS config of a connection to Redis at address.
func redisTLS(t *podconfig.RedisTLS, address string, env environment) (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if config.ServerName == "" {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, fmt.Errorf("redis.address %q: %w", address, err)
		}
		config.ServerName = host
	}
	if t.CAEnv != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(env.secret(t.CAEnv))) {
			return nil, fmt.Errorf("redis.tls: the CA bundle (environment variable %s) holds no PEM certificate", t.CAEnv)
		}
		config.RootCAs = pool
	}
	return config, nil
}

// newSealer seals the values the route keeps in Redis under the secret
// of the config's seal key variable; nil when the route names no Redis.
func newSealer(r *podconfig.Redis, env environment) (*seal.Sealer, error) {
	if r == nil {
		return nil, nil
	}
	sealer, err := seal.New([]byte(env.secret(r.SealKeyEnv)))
	if err != nil {
		return nil, fmt.Errorf("redis: the seal key (environment variable %s): %w", r.SealKeyEnv, err)
	}
	return sealer, nil
}

// pingRedis says whether the route can log in to its Redis, naming the
// address and user on failure (a wrong CA, password or user).
func pingRedis(ctx context.Context, client *redis.Client, r *podconfig.Redis) error {
	ctx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		user := cmp.Or(r.Username, "default")
		return fmt.Errorf("redis at %s as user %s: %w", r.Address, user, err)
	}
	return nil
}
