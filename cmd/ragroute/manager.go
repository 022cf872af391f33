package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/controller"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// managerOptions are the operator's flags.
type managerOptions struct {
	metricsAddr   string
	secureMetrics bool
	probeAddr     string
	pprofAddr     string
	leaderElect   bool
	routeImage    string
	imagePrefixes string
	insecureProxy bool
	pullSecrets   string
	milvusTimeout time.Duration
	milvusRecheck time.Duration
	milvusRetry   time.Duration
	workers       int
	namespaces    []string
	zap           zap.Options
}

func runManager(args []string, stderr io.Writer) int {
	opts := managerOptions{}
	fs := flag.NewFlagSet("ragroute manager", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.metricsAddr, "metrics-bind-address", "0", "address of the metrics endpoint (:8443 for HTTPS, :8080 for HTTP, 0 to disable)")
	fs.BoolVar(&opts.secureMetrics, "metrics-secure", true, "serve metrics over HTTPS with authentication and authorization")
	fs.StringVar(&opts.probeAddr, "health-probe-bind-address", ":8081", "address of the health probe endpoint")
	fs.StringVar(&opts.pprofAddr, "pprof-bind-address", "", "address of a net/http/pprof endpoint for profiling the manager (empty: off); bind it to loopback")
	fs.BoolVar(&opts.leaderElect, "leader-elect", false, "elect a leader so only one manager reconciles")
	fs.StringVar(&opts.routeImage, "route-image", "ragroute/ragroute:"+version, "image of route pods (unless a QueryRoute names its own), ingestion Jobs and evaluation Jobs")
	fs.StringVar(&opts.pullSecrets, "image-pull-secrets", "", "comma-separated names of image pull Secrets for route, ingestion and evaluation pods (one of each name must exist in their namespace)")
	fs.StringVar(&opts.imagePrefixes, "allowed-image-prefixes", "", "comma-separated image prefixes a QueryRoute's spec.image may use (empty: only --route-image runs); a prefix ends at a \"/\", \":\" or \"@\" boundary (docs/operator.md)")
	fs.BoolVar(&opts.insecureProxy, "allow-insecure-proxy-auth", false, "admit QueryRoutes with trustedProxy.insecureAllowAnyCaller (identity headers believed from any peer their NetworkPolicy admits, no shared secret); off: such routes are not deployed")
	fs.DurationVar(&opts.milvusTimeout, "milvus-probe-timeout", 5*time.Second, "how long one Milvus connection check may take")
	fs.DurationVar(&opts.milvusRecheck, "milvus-recheck-interval", 5*time.Minute, "how often a connected KnowledgeStore is checked again")
	fs.DurationVar(&opts.milvusRetry, "milvus-retry-interval", 30*time.Second, "how soon an unreachable KnowledgeStore is checked again")
	fs.IntVar(&opts.workers, "max-concurrent-reconciles", 4, "how many objects each controller reconciles at once")
	var watchNamespaces string
	fs.StringVar(&watchNamespaces, "watch-namespaces", "", "comma-separated namespaces the operator watches and reconciles (empty: all namespaces); it needs RBAC only in these (docs/operator.md)")
	opts.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if opts.workers < 1 {
		fmt.Fprintf(stderr, "--max-concurrent-reconciles must be at least 1, not %d\n", opts.workers)
		return 2
	}
	opts.namespaces = controller.ParseNamespaces(watchNamespaces)
	for _, ns := range opts.namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			fmt.Fprintf(stderr, "--watch-namespaces: %q is not a namespace name: %s\n", ns, strings.Join(errs, "; "))
			return 2
		}
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts.zap)))
	if err := startManager(ctrl.SetupSignalHandler(), opts); err != nil {
		ctrl.Log.Error(err, "manager stopped")
		return 1
	}
	return 0
}

// newScheme knows the built-in kinds and ragroute's.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

func startManager(ctx context.Context, opts managerOptions) error {
	scheme, err := newScheme()
	if err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	metricsOpts := metricsserver.Options{
		BindAddress:   opts.metricsAddr,
		SecureServing: opts.secureMetrics,
		// HTTP/2 stays off: it is open to stream-reset and rapid-reset attacks.
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
	}
	if opts.secureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	restConfig := ctrl.GetConfigOrDie()
	tracing, flushTraces, err := tracingFromEnv(ctx, os.Getenv, "ragroute-operator")
	if err != nil {
		return err
	}
	defer flushTraces()
	if tracing != nil {
		// Each API request a reconcile makes is a child of its span.
		restConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(tracing), otelhttp.WithPropagators(propagation.TraceContext{}))
		})
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsOpts,
		HealthProbeBindAddress: opts.probeAddr,
		PprofBindAddress:       opts.pprofAddr,
		Cache:                  controller.CacheOptions(opts.namespaces),
		LeaderElection:         opts.leaderElect,
		LeaderElectionID:       "ragroute-operator.ragroute.io",
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := controller.Setup(ctx, mgr, controller.Options{
		Clock:                   clock.RealClock{},
		RouteImage:              opts.routeImage,
		AllowedImagePrefixes:    controller.ParseImagePrefixes(opts.imagePrefixes),
		ImagePullSecrets:        controller.ParseImagePullSecrets(opts.pullSecrets),
		AllowInsecureProxyAuth:  opts.insecureProxy,
		MilvusProbe:             knowledge.Probe,
		MilvusProbeTimeout:      opts.milvusTimeout,
		MilvusRecheck:           opts.milvusRecheck,
		MilvusRetry:             opts.milvusRetry,
		ReadIndex:               knowledge.ReadIndexState,
		MaxConcurrentReconciles: opts.workers,
		Tracing:                 tracing,
		Metrics:                 ctrlmetrics.Registry,
		WatchNamespaces:         opts.namespaces,
	}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("add ready check: %w", err)
	}
	ctrl.Log.Info("starting manager", "version", version, "routeImage", opts.routeImage, "allowedImagePrefixes", opts.imagePrefixes, "allowInsecureProxyAuth", opts.insecureProxy, "maxConcurrentReconciles", opts.workers, "watchNamespaces", opts.namespaces)
	return mgr.Start(ctx)
}
