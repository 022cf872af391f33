package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Options wire the reconcilers to the world outside the API server.
type Options struct {
	Clock clock.PassiveClock
	// RouteImage runs route pods (unless a QueryRoute names its own
	// image), ingestion Jobs and evaluation Jobs.
	RouteImage         string
	MilvusProbe        MilvusProbe
	MilvusProbeTimeout time.Duration
	MilvusRecheck      time.Duration
	MilvusRetry        time.Duration
	ReadIndex          IndexReader
	// MaxConcurrentReconciles is how many objects each controller
	// reconciles at once (0: controller-runtime's default, one).
	MaxConcurrentReconciles int
	// RouteCountDelay is how long a PlatformPrompt waits after a route
	// using it comes, goes or moves before it counts its routes again
	// (0: defaultRouteCountDelay, 10 s): one count write per prompt per
	// delay while routes keep coming.
	RouteCountDelay time.Duration
	// AllowedImagePrefixes admit a QueryRoute's spec.image other than
	// RouteImage (see imageAllowed); empty: none is admitted.
	AllowedImagePrefixes []string
	// ImagePullSecrets name the Secrets route, ingestion and evaluation
	// pods pull their image with (each must exist in the pod's namespace).
	ImagePullSecrets []string
	// AllowInsecureProxyAuth admits QueryRoutes with
	// trustedProxy.insecureAllowAnyCaller (--allow-insecure-proxy-auth).
	AllowInsecureProxyAuth bool
	// Tracing, when set, makes each reconcile a span.
	Tracing trace.TracerProvider
	// Metrics, when set, is where the RouteEvaluation gauges register
	// (the manager's metrics registry).
	Metrics prometheus.Registerer
	// WatchNamespaces are the manager's cache's namespaces (the same
	// --watch-namespaces as CacheOptions; empty: every namespace), which
	// the metadata cache of referenced ConfigMaps watches too.
	WatchNamespaces []string
}

// Setup registers the field indexes and all four reconcilers with mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	referenced, err := newReferencedConfigMaps(mgr, opts.WatchNamespaces)
	if err != nil {
		return err
	}
	var evaluationMetrics *EvaluationMetrics
	if opts.Metrics != nil {
		m, err := NewEvaluationMetrics(opts.Metrics)
		if err != nil {
			return err
		}
		evaluationMetrics = m
	}
	reconcilers := []interface{ SetupWithManager(ctrl.Manager) error }{
		&PlatformPromptReconciler{Tracing: opts.Tracing, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ReferencedConfigMaps: referenced, Recorder: mgr.GetEventRecorder("platformprompt-controller"), Clock: opts.Clock,
			MaxConcurrentReconciles: opts.MaxConcurrentReconciles, RouteCountDelay: opts.RouteCountDelay},
		&KnowledgeStoreReconciler{
			Tracing: opts.Tracing, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ReferencedConfigMaps: referenced,
			Recorder: mgr.GetEventRecorder("knowledgestore-controller"), Clock: opts.Clock,
			Probe: opts.MilvusProbe, ProbeTimeout: opts.MilvusProbeTimeout,
			RecheckAfter: opts.MilvusRecheck, RetryAfter: opts.MilvusRetry,
			ReadIndex: opts.ReadIndex, Image: opts.RouteImage, ImagePullSecrets: opts.ImagePullSecrets,
			MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		},
		&QueryRouteReconciler{Tracing: opts.Tracing, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("queryroute-controller"), Clock: opts.Clock,
			RouteImage: opts.RouteImage, AllowedImagePrefixes: opts.AllowedImagePrefixes, ImagePullSecrets: opts.ImagePullSecrets,
			AllowInsecureProxyAuth:  opts.AllowInsecureProxyAuth,
			MaxConcurrentReconciles: opts.MaxConcurrentReconciles},
		&RouteEvaluationReconciler{Tracing: opts.Tracing, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ReferencedConfigMaps: referenced,
			Recorder: mgr.GetEventRecorder("routeevaluation-controller"), Clock: opts.Clock,
			Image: opts.RouteImage, ImagePullSecrets: opts.ImagePullSecrets, Metrics: evaluationMetrics,
			MaxConcurrentReconciles: opts.MaxConcurrentReconciles},
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up %T: %w", r, err)
		}
	}
	return nil
}

// newReferencedConfigMaps starts, with the manager's caches, the
// metadata-only cache of ConfigMaps (ReferencedConfigMapsOptions) through
// which prompts, stores and evaluations watch the ConfigMaps they read.
func newReferencedConfigMaps(mgr ctrl.Manager, namespaces []string) (cache.Cache, error) {
	opts := ReferencedConfigMapsOptions(namespaces)
	opts.HTTPClient, opts.Scheme, opts.Mapper = mgr.GetHTTPClient(), mgr.GetScheme(), mgr.GetRESTMapper()
	referenced, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("create the cache of referenced ConfigMaps: %w", err)
	}
	if err := mgr.Add(startedCache{referenced}); err != nil {
		return nil, fmt.Errorf("add the cache of referenced ConfigMaps: %w", err)
	}
	return referenced, nil
}

// startedCache makes the manager start a cache with its own caches, before
// leader election, and wait for it to sync.
type startedCache struct{ cache.Cache }

func (c startedCache) GetCache() cache.Cache { return c.Cache }

// watchReferencedConfigMaps is the watch through which a reconciler hears
// of the ConfigMaps its kind references, mapped by handler.
func watchReferencedConfigMaps(referenced cache.Cache, h handler.EventHandler) source.Source {
	return source.Kind[client.Object](referenced, configMapMetadata(), h)
}
