package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/assembly/serving"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/server"
)

// runServe serves one route's query API from its rendered config.
func runServe(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("ragroute serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "/etc/ragroute/"+podconfig.RouteFileName, "route config rendered by the operator")
	listen := fs.String("listen", "", "address to listen on (default :<server.port> of the config)")
	metricsListen := fs.String("metrics-listen", "", "address of /healthz, /readyz and /metrics (default :<server.metricsPort> of the config; "+
		"with neither they are served on the API's address)")
	var level slog.Level
	fs.TextVar(&level, "log-level", slog.LevelInfo, "least severe log level written: debug, info, warn or error")
	shutdownDelay := fs.Duration("shutdown-delay", defaultShutdownDelay, "after SIGTERM, how long the route still accepts requests (its /readyz failing) "+
		"while Services and load balancers stop sending it new ones; then it drains")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := podconfig.LoadRoute(*configPath)
	if err != nil {
		logger.Error("load config", "error", err)
		return 2
	}
	apiAddr, probeAddr := listenAddresses(cfg.Server, *listen, *metricsListen)
	ln, err := net.Listen("tcp", apiAddr)
	if err != nil {
		logger.Error("listen", "error", err)
		return 1
	}
	var probes net.Listener
	if probeAddr != "" {
		if probes, err = net.Listen("tcp", probeAddr); err != nil {
			ln.Close()
			logger.Error("listen for probes and metrics", "error", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, os.Getenv, listeners{api: ln, probes: probes, shutdownDelay: *shutdownDelay}, logger); err != nil {
		logger.Error("serve", "error", err)
		return 1
	}
	return 0
}

// listenAddresses are where the API and the probes listen: a flag, else
// the config's port. No probe address (neither a flag nor
// server.metricsPort): the probes and metrics are served on the API's.
func listenAddresses(server podconfig.Server, listen, metricsListen string) (api, probes string) {
	api, probes = listen, metricsListen
	if api == "" {
		api = fmt.Sprintf(":%d", server.Port)
	}
	if probes == "" && server.MetricsPort != 0 {
		probes = fmt.Sprintf(":%d", server.MetricsPort)
	}
	return api, probes
}

// listeners are the route's: the API's, and the probes' and metrics' when
// they have their own (nil: on the API's). shutdownDelay is how long they
// still accept requests once the route is told to stop; drain how long
// the answers in flight then have (0: drainTimeout).
type listeners struct {
	api, probes   net.Listener
	shutdownDelay time.Duration
	drain         time.Duration
}

// Shutdown timing. A deleted pod leaves its Service's endpoints a moment
// after it gets SIGTERM (kube-proxy, ingress controllers and mesh proxies
// each catch up on their own), and a listener closed at once refuses what
// they still send: so the route keeps serving for defaultShutdownDelay,
// its /readyz failing, then drains for up to drainTimeout. Both fit in the
// pod's terminationGracePeriodSeconds (60).
const (
	defaultShutdownDelay = 5 * time.Second
	drainTimeout         = 30 * time.Second
	// lastWords is the end of the drain left to the turns cancelled
	// before it, to write their error event before the connections close.
	lastWords = 2 * time.Second
)

// serve runs the route on its listeners until ctx ends. Then it keeps
// serving for ln.shutdownDelay, not ready, and drains: turns in flight
// finish within drainTimeout; those still running lastWords before it
// are cancelled, so their streams end with an error event instead of
// hanging or being cut.
func serve(ctx context.Context, cfg podconfig.RouteConfig, env environment, ln listeners, logger *slog.Logger) error {
	rt, err := serving.Open(ctx, cfg, assembly.Secrets(env), logger)
	if err != nil {
		return err
	}
	defer rt.Close()

	tracing, flushTraces, err := tracingFromEnv(ctx, env, "ragroute-route",
		attribute.String("ragroute.route", cfg.Route.Namespace+"/"+cfg.Route.Name))
	if err != nil {
		return err
	}
	defer flushTraces() // last: after the drain, so finishing turns' spans go out
	rt.API.Tracing = tracing
	rt.API.ConfigHash = env(podconfig.EnvConfigHash)
	turns, cancelTurns := context.WithCancel(context.Background())
	defer cancelTurns()
	go rt.Generation.Run(ctx, 30*time.Second)

	// The API alone on its listener when the probes have theirs, else
	// everything on one.
	routeAPI := server.New(turns, *rt.API)
	servers := []*http.Server{newHTTPServer(routeAPI.Handler())}
	listening := []net.Listener{ln.api}
	if ln.probes != nil {
		servers = []*http.Server{newHTTPServer(routeAPI.APIHandler()), newHTTPServer(routeAPI.ProbeHandler())}
		listening = append(listening, ln.probes)
	}
	errs := make(chan error, len(servers))
	for i, srv := range servers {
		defer srv.Close() // after a failed Serve, the others stop too
		go func() { errs <- srv.Serve(listening[i]) }()
	}
	logger.Info("serving route", "route", cfg.Route.Namespace+"/"+cfg.Route.Name, "addr", ln.api.Addr().String(), "probesAddr", addrOf(ln.probes))

	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
	}
	routeAPI.Drain()
	logger.Info("shutting down: serving while the route leaves its Service, then draining", "delay", ln.shutdownDelay.String())
	select {
	case err := <-errs:
		return err
	case <-time.After(ln.shutdownDelay):
	}
	drainFor := cmp.Or(ln.drain, drainTimeout)
	drain, cancel := context.WithTimeout(context.Background(), drainFor)
	defer cancel()
	turnsEnd, cancelTurnsEnd := context.WithTimeout(drain, drainFor-min(lastWords, drainFor/4))
	defer cancelTurnsEnd()
	stopCancelling := context.AfterFunc(turnsEnd, cancelTurns)
	defer stopCancelling()
	// The API drains first: meanwhile the probes still answer, so the
	// kubelet does not restart a pod finishing its streams.
	for _, srv := range servers {
		if err := srv.Shutdown(drain); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	return nil
}

// newHTTPServer serves handler. ReadTimeout bounds the whole request, body
// included, so that a trickled body holds nothing for long, also one a
// handler refuses unread (the server reads it before answering). The API
// bounds the bodies it reads more tightly; net/http lifts the deadline
// once a body has ended, so it never cuts a streamed answer.
func newHTTPServer(handler http.Handler) *http.Server {
	return &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
}

// addrOf is ln's address for the log; "" when there is no listener (the
// probes on the API's).
func addrOf(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}
