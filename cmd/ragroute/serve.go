package main

import (
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

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/api"
)

// runServe serves one route's query API from its rendered config.
func runServe(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("ragroute serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "/etc/ragroute/"+podconfig.RouteFileName, "route config rendered by the operator")
	listen := fs.String("listen", "", "address to listen on (default :<server.port> of the config)")
	var level slog.Level
	fs.TextVar(&level, "log-level", slog.LevelInfo, "least severe log level written: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := podconfig.LoadRoute(*configPath)
	if err != nil {
		logger.Error("load config", "error", err)
		return 2
	}
	addr := *listen
	if addr == "" {
		addr = fmt.Sprintf(":%d", cfg.Server.Port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Error("listen", "error", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, os.Getenv, ln, logger); err != nil {
		logger.Error("serve", "error", err)
		return 1
	}
	return 0
}

// serve runs the route on ln until ctx ends. Then running turns are
// cancelled (their streams end with an error event, never hang) and the
// server drains for up to 30 s.
func serve(ctx context.Context, cfg podconfig.RouteConfig, env environment, ln net.Listener, logger *slog.Logger) error {
	rt, err := newRouteRuntime(ctx, cfg, env, logger)
	if err != nil {
		return err
	}
	defer rt.close()
	tracing, flushTraces, err := tracingFromEnv(ctx, env, "ragroute-route",
		attribute.String("ragroute.route", cfg.Route.Namespace+"/"+cfg.Route.Name))
	if err != nil {
		return err
	}
	defer flushTraces() // last: after the drain, so finishing turns' spans go out
	rt.server.Tracing = tracing
	turns, cancelTurns := context.WithCancel(context.Background())
	defer cancelTurns()
	go rt.generation.Run(ctx, 30*time.Second)

	// ReadTimeout bounds the whole request, body included, so that a
	// trickled body holds nothing for long, also one a handler refuses
	// unread (the server reads it before answering). The API bounds the
	// bodies it reads more tightly; net/http lifts the deadline once a
	// body has ended, so it never cuts a streamed answer.
	srv := &http.Server{Handler: api.New(turns, *rt.server).Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute}
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(ln) }()
	logger.Info("serving route", "route", cfg.Route.Namespace+"/"+cfg.Route.Name, "addr", ln.Addr().String())

	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
	}
	drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cancelTurns()
	if err := srv.Shutdown(drain); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
