package serving

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/testenv"
)

// A route reaches a Redis that speaks only TLS and admits only its ACL
// user: with the right CA, user and password it logs in; a wrong CA or
// password fails the check with an error that names the address, the user
// and the cause.
func TestRedisOverTLSWithAnACLUser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	ctx := context.Background()
	server, err := testenv.StartSecureRedis(ctx, t.TempDir(), "support-route", "s3cret-password")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Stop)
	otherCA, err := testenv.NewCA("not Redis' CA")
	if err != nil {
		t.Fatal(err)
	}
	env := func(ca []byte, password string) assembly.Secrets {
		vars := map[string]string{podconfig.EnvRedisCA: string(ca), podconfig.EnvRedisPassword: password}
		return func(name string) string { return vars[name] }
	}
	config := podconfig.Redis{Address: server.Addr, Username: server.Username, PasswordEnv: podconfig.EnvRedisPassword,
		TLS: &podconfig.RedisTLS{CAEnv: podconfig.EnvRedisCA, ServerName: server.ServerName}}
	ping := func(config podconfig.Redis, env assembly.Secrets) error {
		var open closers
		defer open.close()
		client, err := newRedis(&config, env, 0, &open)
		if err != nil {
			return err
		}
		return pingRedis(ctx, client, &config)
	}

	if err := ping(config, env(server.CA.PEM, server.Password)); err != nil {
		t.Fatalf("the right CA, user and password: %v", err)
	}
	checkRouteUsesRedis(t, config, env(server.CA.PEM, server.Password))
	byAddress := withTLS(config, &podconfig.RedisTLS{CAEnv: podconfig.EnvRedisCA})
	if err := ping(byAddress, env(server.CA.PEM, server.Password)); err != nil {
		t.Fatalf("no server name checks the address' host (127.0.0.1): %v", err)
	}
	for name, tc := range map[string]struct {
		config podconfig.Redis
		env    assembly.Secrets
		want   string
	}{
		"wrong CA":       {config, env(otherCA.PEM, server.Password), "certificate signed by unknown authority"},
		"system roots":   {withTLS(config, &podconfig.RedisTLS{ServerName: server.ServerName}), env(nil, server.Password), "certificate"},
		"wrong name":     {withTLS(config, &podconfig.RedisTLS{CAEnv: podconfig.EnvRedisCA, ServerName: "other.test"}), env(server.CA.PEM, server.Password), "other.test"},
		"wrong password": {config, env(server.CA.PEM, "guessed"), "WRONGPASS"},
		"default user":   {withUser(config, ""), env(server.CA.PEM, server.Password), "WRONGPASS"},
		"no TLS":         {withTLS(config, nil), env(nil, server.Password), "redis at " + server.Addr},
	} {
		t.Run(name, func(t *testing.T) {
			err := ping(tc.config, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "redis at "+server.Addr+" as user") {
				t.Fatalf("ping: %v, want an error naming the address, the user and %q", err, tc.want)
			}
		})
	}
	if _, err := newRedis(&config, env([]byte("not PEM"), server.Password), 0, &closers{}); err == nil ||
		!strings.Contains(err.Error(), "RAGROUTE_REDIS_CA") {
		t.Errorf("a CA variable without a certificate: %v, want an error naming the variable", err)
	}
}

func withTLS(c podconfig.Redis, t *podconfig.RedisTLS) podconfig.Redis { c.TLS = t; return c }
func withUser(c podconfig.Redis, user string) podconfig.Redis          { c.Username = user; return c }

// A route with Redis starts only with a seal key of at least 32 bytes,
// and says which variable holds the short one.
func TestRouteRefusesAShortRedisSealKey(t *testing.T) {
	config := &podconfig.Redis{Address: "127.0.0.1:1", SealKeyEnv: podconfig.EnvRedisSealKey}
	short := func(string) string { return "only-31-bytes-long-not-enough!!" }
	if _, err := newSealer(config, short); err == nil || !strings.Contains(err.Error(), podconfig.EnvRedisSealKey) ||
		!strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("newSealer(31 bytes) = %v, want an error naming %s and the minimum", err, podconfig.EnvRedisSealKey)
	}
	long := func(string) string { return strings.Repeat("k", 32) }
	if sealer, err := newSealer(config, long); err != nil || sealer == nil {
		t.Fatalf("newSealer(32 bytes) = %v, %v", sealer, err)
	}
}

// checkRouteUsesRedis plays a turn and a cache entry through the client
// of config, as the route's user may (its keys, no dangerous command),
// and checks the user reaches no other key.
func checkRouteUsesRedis(t *testing.T, config podconfig.Redis, env assembly.Secrets) {
	t.Helper()
	ctx := context.Background()
	var open closers
	defer open.close()
	client, err := newRedis(&config, env, 0, &open)
	if err != nil {
		t.Fatal(err)
	}
	cfg := podconfig.RouteConfig{Route: podconfig.RouteRef{Namespace: "acme", Name: "support"}}
	sealer := sealtest.New(t)
	log := turnlog.NewRedis(client, sealer, redisPrefix(cfg), time.Minute)
	if err := log.Start(ctx, "t1", "ann"); err != nil {
		t.Fatal(err)
	}
	if err := log.Append(ctx, "t1", turn.Event{Type: turn.EventTurnCompleted, Data: turn.Completed{}}); err != nil {
		t.Fatal(err)
	}
	if events, done, err := log.Read(ctx, "t1", 0, 0); err != nil || !done || len(events) != 1 {
		t.Fatalf("read the turn back: %+v, %v, %v", events, done, err)
	}
	cache := retrieval.NewRedisCache(client, sealer, redisPrefix(cfg), time.Minute)
	cache.Put(ctx, "k", []retrieval.Fragment{{ID: "a", Text: "kept"}})
	if got, ok := cache.Get(ctx, "k"); !ok || got[0].Text != "kept" {
		t.Fatalf("cache entry: %+v, %v", got, ok)
	}
	if err := client.Set(ctx, "other-app:key", "x", time.Minute).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("the route's user wrote another application's key: %v", err)
	}
}
