package controller

import (
	"cmp"
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// PlatformPromptReconciler validates PlatformPrompts, resolves text kept in
// ConfigMaps, and publishes the content hash and how many routes use it.
type PlatformPromptReconciler struct {
	// Tracing, when set, makes each reconcile a span (tracing.go).
	Tracing trace.TracerProvider
	client.Client
	// APIReader reads a prompt's ConfigMap, which the cache does not hold.
	APIReader client.Reader
	// ReferencedConfigMaps is the metadata of every ConfigMap, through
	// which a change to a prompt's ConfigMap reaches the prompt.
	ReferencedConfigMaps cache.Cache
	Recorder             events.EventRecorder
	Clock                clock.PassiveClock
	// MaxConcurrentReconciles is how many objects are reconciled at once
	// (0: controller-runtime's default, one).
	MaxConcurrentReconciles int
	// RouteCountDelay is how long the prompt a route uses waits after the
	// route comes, goes or moves before it counts its routes again (0:
	// defaultRouteCountDelay).
	RouteCountDelay time.Duration
}

// +kubebuilder:rbac:groups=ragroute.io,resources=platformprompts,verbs=get;list;watch
// +kubebuilder:rbac:groups=ragroute.io,resources=platformprompts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// promptScope carries what one reconcile of a prompt found, phase to phase.
type promptScope struct {
	prompt *v1alpha1.PlatformPrompt
	routes int32
	hash   string
	refErr *referenceError
}

// Reconcile brings one PlatformPrompt's status in line with its spec.
func (r *PlatformPromptReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	prompt := &v1alpha1.PlatformPrompt{}
	if err := r.Get(ctx, req.NamespacedName, prompt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !prompt.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	s := &promptScope{prompt: prompt}
	out, err := runPhases(ctx, s, r.countRoutes, r.resolveContent)
	if err != nil {
		return ctrl.Result{}, err // a failed read says nothing about the prompt: keep its status
	}
	s.refErr = out.refErr
	return ctrl.Result{}, r.applyPromptStatus(ctx, s)
}

// applyPromptStatus derives the status from what the phases found. A
// broken text keeps the hash of the last good one.
func (r *PlatformPromptReconciler) applyPromptStatus(ctx context.Context, s *promptScope) error {
	prompt := s.prompt
	status := prompt.Status.DeepCopy()
	status.ObservedGeneration = prompt.Generation
	status.Routes = s.routes
	if s.refErr == nil {
		status.Hash = s.hash
	}
	now := r.Clock.Now()
	setCondition(&status.Conditions, promptReadyCondition(s.refErr, status.Hash), prompt.Generation, now)
	setProgressConditions(&status.Conditions, prompt.Generation, now, v1alpha1.ConditionReady)
	return publishStatus(ctx, r.Client, r.Recorder, prompt, prompt.Status.Conditions, status.Conditions, status)
}

// SetupWithManager registers the reconciler: prompts, the ConfigMaps their
// text comes from, and the routes they count.
func (r *PlatformPromptReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.PlatformPrompt{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(watchReferencedConfigMaps(r.ReferencedConfigMaps, referrersBy[v1alpha1.PlatformPromptList](r.Client, indexPromptByConfigMap))).
		Watches(&v1alpha1.QueryRoute{}, recountPrompts(cmp.Or(r.RouteCountDelay, defaultRouteCountDelay))).
		Named("platformprompt").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(traced(r, r.Tracing, "PlatformPrompt"))
}
