package serving

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/seal"
)

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
func newRedis(r *podconfig.Redis, secrets assembly.Secrets, poolSize int, open *closers) (*redis.Client, error) {
	if r == nil {
		return nil, nil
	}
	opts := &redis.Options{
		Addr: r.Address, DB: int(r.DB), Username: r.Username, Password: secrets.Get(r.PasswordEnv),
		DialTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second, PoolSize: poolSize,
	}
	if t := r.TLS; t != nil {
		config, err := redisTLS(t, r.Address, secrets)
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
func redisTLS(t *podconfig.RedisTLS, address string, secrets assembly.Secrets) (*tls.Config, error) {
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
		if !pool.AppendCertsFromPEM([]byte(secrets.Get(t.CAEnv))) {
			return nil, fmt.Errorf("redis.tls: the CA bundle (environment variable %s) holds no PEM certificate", t.CAEnv)
		}
		config.RootCAs = pool
	}
	return config, nil
}

// newSealer seals the values the route keeps in Redis under the secret
// of the config's seal key variable; nil when the route names no Redis.
func newSealer(r *podconfig.Redis, secrets assembly.Secrets) (*seal.Sealer, error) {
	if r == nil {
		return nil, nil
	}
	sealer, err := seal.New([]byte(secrets.Get(r.SealKeyEnv)))
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

// redisPrefix keeps routes that share a Redis apart.
func redisPrefix(cfg podconfig.RouteConfig) string {
	return "ragroute:" + cfg.Route.Namespace + "/" + cfg.Route.Name + ":"
}

// vectorTTL lets unused vectors of the grounding check go from Redis;
// none goes stale.
const vectorTTL = 24 * time.Hour
