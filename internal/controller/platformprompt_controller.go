package controller

import (
	"context"
	"fmt"
	"go.opentelemetry.io/otel/trace"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// PlatformPromptReconciler validates PlatformPrompts, resolves text kept in
// ConfigMaps, and publishes the content hash and how many routes use it.
type PlatformPromptReconciler struct {
	// Tracing, when set, makes each reconcile a span (tracing.go).
	Tracing trace.TracerProvider
	client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// MaxConcurrentReconciles is how many objects are reconciled at once
	// (0: controller-runtime's default, one).
	MaxConcurrentReconciles int
}

// +kubebuilder:rbac:groups=ragroute.io,resources=platformprompts,verbs=get;list;watch
// +kubebuilder:rbac:groups=ragroute.io,resources=platformprompts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one PlatformPrompt's status in line with its spec.
func (r *PlatformPromptReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	prompt := &v1alpha1.PlatformPrompt{}
	if err := r.Get(ctx, req.NamespacedName, prompt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !prompt.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	status := prompt.Status.DeepCopy()
	defer func() {
		if reterr == nil {
			status.ObservedGeneration = prompt.Generation
			setProgressConditions(&status.Conditions, prompt.Generation, r.Clock.Now(), v1alpha1.ConditionReady)
			reterr = publishStatus(ctx, r.Client, r.Recorder, prompt, prompt.Status.Conditions, status.Conditions, status)
		}
	}()

	content, err := resolvePrompt(ctx, r.Client, prompt)
	routes, countErr := r.countRoutes(ctx, prompt)
	if countErr != nil {
		return ctrl.Result{}, countErr
	}
	status.Routes = routes
	if err != nil {
		if refErr, ok := asReferenceError(err); ok {
			setCondition(&status.Conditions, promptReadyCondition(refErr, ""), prompt.Generation, r.Clock.Now())
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	status.Hash = content.Hash()
	setCondition(&status.Conditions, promptReadyCondition(nil, status.Hash), prompt.Generation, r.Clock.Now())
	return ctrl.Result{}, nil
}

func (r *PlatformPromptReconciler) countRoutes(ctx context.Context, prompt *v1alpha1.PlatformPrompt) (int32, error) {
	routes := &v1alpha1.QueryRouteList{}
	if err := r.List(ctx, routes, client.InNamespace(prompt.Namespace),
		client.MatchingFields{indexRouteByPrompt: prompt.Name}); err != nil {
		return 0, fmt.Errorf("list routes using PlatformPrompt %q: %w", prompt.Name, err)
	}
	return int32(len(routes.Items)), nil
}

// SetupWithManager registers the reconciler: prompts, the ConfigMaps their
// text comes from, and the routes they count.
func (r *PlatformPromptReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.PlatformPrompt{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				return requestsFor(ctx, r.Client, &v1alpha1.PlatformPromptList{}, o.GetNamespace(), indexPromptByConfigMap, o.GetName())
			})).
		Watches(&v1alpha1.QueryRoute{}, recountPrompts()).
		Named("platformprompt").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(traced(r, r.Tracing, "PlatformPrompt"))
}
