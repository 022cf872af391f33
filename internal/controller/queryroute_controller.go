package controller

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// QueryRouteReconciler turns a QueryRoute into a ConfigMap (the effective
// route config), a Deployment running `ragroute serve` and a Service.
type QueryRouteReconciler struct {
	// Tracing, when set, makes each reconcile a span (tracing.go).
	Tracing trace.TracerProvider
	client.Client
	// APIReader reads past the cache: whether a referenced Secret exists
	// without the label that would put it there (metadata only), a
	// ConfigMap a spec references, and a child the cache lacks.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// MaxConcurrentReconciles is how many objects are reconciled at once
	// (0: controller-runtime's default, one).
	MaxConcurrentReconciles int
	// RouteImage runs route pods unless a route names its own image.
	RouteImage string
	// AllowedImagePrefixes admit a route's own spec.image (imageAllowed);
	// empty: only RouteImage runs.
	AllowedImagePrefixes []string
	// ImagePullSecrets name the Secrets route pods pull their image with.
	ImagePullSecrets []string
	// AllowInsecureProxyAuth admits routes that trust identity headers
	// from any caller (insecureAllowAnyCaller); false: they are refused.
	AllowInsecureProxyAuth bool
}

// +kubebuilder:rbac:groups=ragroute.io,resources=queryroutes,verbs=get;list;watch
// +kubebuilder:rbac:groups=ragroute.io,resources=queryroutes/status,verbs=get;update;patch
// Its children's owner references set blockOwnerDeletion, which the
// OwnerReferencesPermissionEnforcement admission plugin allows only with
// update on the owner's finalizers.
// +kubebuilder:rbac:groups=ragroute.io,resources=queryroutes/finalizers,verbs=update
// +kubebuilder:rbac:groups=ragroute.io,resources=knowledgestores;platformprompts,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps;services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;patch;delete

// routeScope carries what one reconcile of a route found, phase to phase;
// its facts are derived after the phases (routeFactsOf; phases.go says
// why).
type routeScope struct {
	route      *v1alpha1.QueryRoute
	inputs     routeInputs
	configData []byte
	configHash string
	applied    bool
	deployment *appsv1.Deployment
	refErr     *referenceError
	applyErr   error
}

// Reconcile brings one route's children and status in line with its spec
// and the objects it references.
func (r *QueryRouteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	route := &v1alpha1.QueryRoute{}
	if err := r.Get(ctx, req.NamespacedName, route); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !route.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // children go with their owner
	}

	s := &routeScope{route: route}
	out, err := runPhases(ctx, s, r.resolveReferences, r.renderConfig, r.applyChildren)
	if err == nil {
		// Not a phase: a broken reference stops the phases, and the
		// status still tells how the last good config rolls out.
		err = r.observeDeployment(ctx, s)
	}
	if err != nil {
		return ctrl.Result{}, err // a failed read says nothing about the route: keep its status
	}
	s.refErr, s.applyErr = out.refErr, out.applyErr
	if err := r.applyRouteStatus(ctx, s); err != nil {
		return ctrl.Result{}, errors.Join(s.applyErr, err)
	}
	return ctrl.Result{}, s.applyErr // retried with backoff; the status says why
}

// applyRouteStatus derives the status from what the phases found.
func (r *QueryRouteReconciler) applyRouteStatus(ctx context.Context, s *routeScope) error {
	route := s.route
	status := route.Status.DeepCopy()
	status.ObservedGeneration = route.Generation
	if s.applied {
		status.ConfigHash = s.configHash
		status.Endpoint = routeEndpoint(route)
	}
	status.Selector = labels.SelectorFromSet(routeSelector(route)).String()
	if s.deployment != nil {
		status.Replicas = s.deployment.Status.Replicas
		status.ReadyReplicas = s.deployment.Status.ReadyReplicas
	}
	now := r.Clock.Now()
	for _, c := range routeConditions(routeFactsOf(s)) {
		setCondition(&status.Conditions, c, route.Generation, now)
	}
	// Degraded first: its reason names what blocks; then the rollout.
	setProgressConditions(&status.Conditions, route.Generation, now,
		v1alpha1.ConditionDegraded, v1alpha1.ConditionReady)
	recordInsecureAuth(r.Recorder, route, route.Status.Conditions, status.Conditions)
	return publishStatus(ctx, r.Client, r.Recorder, route, route.Status.Conditions, status.Conditions, status)
}

// SetupWithManager registers the reconciler: routes, their children, and
// the stores, prompts and Secrets they reference (through field indexes).
func (r *QueryRouteReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.QueryRoute{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Service{}).
		Owns(&appsv1.Deployment{}).
		Owns(&networkingv1.NetworkPolicy{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}).
		Watches(&v1alpha1.KnowledgeStore{}, referrersBy[v1alpha1.QueryRouteList](r.Client, indexRouteByStore), builder.WithPredicates(referencedFactsChanged)).
		Watches(&v1alpha1.PlatformPrompt{}, referrersBy[v1alpha1.QueryRouteList](r.Client, indexRouteByPrompt), builder.WithPredicates(referencedFactsChanged)).
		Watches(&corev1.Secret{}, routesUsingSecret(r.Client)).
		Named("queryroute").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(traced(r, r.Tracing, "QueryRoute"))
}
