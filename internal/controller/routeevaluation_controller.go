package controller

import (
	"context"
	"errors"
	"time"

	"github.com/robfig/cron/v3"
	"go.opentelemetry.io/otel/trace"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
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

// RouteEvaluationReconciler runs a RouteEvaluation's question set against
// its QueryRoute as Jobs (`ragroute eval-route`), when it is created, on
// its schedule and when what the route serves changes, and reports each
// finished run's figures and whether they pass.
type RouteEvaluationReconciler struct {
	// Tracing, when set, makes each reconcile a span (tracing.go).
	Tracing trace.TracerProvider
	client.Client
	// APIReader reads past the cache: whether a referenced Secret exists
	// without the label that would put it there (metadata only), the
	// question set's ConfigMap, and a child the cache lacks.
	APIReader client.Reader
	// ReferencedConfigMaps is the metadata of every ConfigMap, through
	// which a change to the question set reaches the evaluation.
	ReferencedConfigMaps cache.Cache
	Recorder             events.EventRecorder
	Clock                clock.PassiveClock
	// Image runs the evaluation Jobs (the operator's own image).
	Image string
	// ImagePullSecrets name the Secrets run pods pull their image with.
	ImagePullSecrets []string
	// Metrics, when set, exports each evaluation's last figures.
	Metrics *EvaluationMetrics
	// MaxConcurrentReconciles is how many objects are reconciled at once.
	MaxConcurrentReconciles int
}

// +kubebuilder:rbac:groups=ragroute.io,resources=routeevaluations,verbs=get;list;watch
// +kubebuilder:rbac:groups=ragroute.io,resources=routeevaluations/status,verbs=get;update;patch
// Its children's owner references set blockOwnerDeletion, which the
// OwnerReferencesPermissionEnforcement admission plugin allows only with
// update on the owner's finalizers.
// +kubebuilder:rbac:groups=ragroute.io,resources=routeevaluations/finalizers,verbs=update
// +kubebuilder:rbac:groups=ragroute.io,resources=queryroutes;knowledgestores,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete

// evaluationScope carries what one reconcile of an evaluation found.
type evaluationScope struct {
	evaluation *v1alpha1.RouteEvaluation
	// status is the status being built: a finished run moves from Active
	// to LastRun, a started one into Active. Only the phases move this run
	// record (it is state the cluster cannot show again once a run's Job
	// is gone; phases.go); the conditions are set at the end.
	status   *v1alpha1.RouteEvaluationStatus
	now      time.Time
	route    *v1alpha1.QueryRoute
	measured measured
	schedule cron.Schedule
	// finished is the run that finished in this reconcile, with its misses.
	finished *v1alpha1.EvaluationRun
	misses   []byte
	// requeueAfter is when the schedule next fires.
	requeueAfter time.Duration
	refErr       *referenceError
	applyErr     error
}

// Reconcile observes the active run, records a finished one, and starts
// the next when one is due.
func (r *RouteEvaluationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	evaluation := &v1alpha1.RouteEvaluation{}
	if err := r.Get(ctx, req.NamespacedName, evaluation); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.Metrics.forget(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !evaluation.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // its Jobs and results go with it
	}
	s := &evaluationScope{evaluation: evaluation, status: evaluation.Status.DeepCopy(), now: r.Clock.Now()}
	out, err := runPhases(ctx, s, r.observeActiveRun, r.writeResults, r.resolveEvaluation, r.startRun)
	if err != nil {
		return ctrl.Result{}, err // a failed read says nothing about the evaluation: keep its status
	}
	s.refErr, s.applyErr = out.refErr, out.applyErr
	if err := r.applyEvaluationStatus(ctx, s); err != nil {
		return ctrl.Result{}, errors.Join(s.applyErr, err)
	}
	return ctrl.Result{RequeueAfter: s.requeueAfter}, s.applyErr
}

// applyEvaluationStatus derives the conditions from what the phases found,
// records a regression as an event and exports the figures.
func (r *RouteEvaluationReconciler) applyEvaluationStatus(ctx context.Context, s *evaluationScope) error {
	evaluation, status := s.evaluation, s.status
	status.ObservedGeneration = evaluation.Generation
	passing := passingCondition(&evaluation.Spec, status.LastRun, status.PreviousRun)
	setCondition(&status.Conditions, evaluationReadyCondition(s.refErr, s.applyErr, status.Active), evaluation.Generation, s.now)
	setCondition(&status.Conditions, passing, evaluation.Generation, s.now)
	setProgressConditions(&status.Conditions, evaluation.Generation, s.now, v1alpha1.ConditionReady, v1alpha1.ConditionPassing)
	if s.finished != nil && r.Recorder != nil {
		eventType := corev1.EventTypeNormal
		if passing.Status != "True" {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(evaluation, nil, eventType, passing.Reason, "Evaluate", "run %s: %s", s.finished.Job, passing.Message)
	}
	r.Metrics.observe(evaluation, status.LastRun, meta.IsStatusConditionTrue(status.Conditions, v1alpha1.ConditionPassing))
	return publishStatus(ctx, r.Client, r.Recorder, evaluation, evaluation.Status.Conditions, status.Conditions, status)
}

// SetupWithManager registers the reconciler: evaluations, their Jobs and
// run pods, and the routes, stores, question ConfigMaps and identity
// Secrets they use (through field indexes).
func (r *RouteEvaluationReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.RouteEvaluation{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, evaluationOfPod()).
		Watches(&v1alpha1.QueryRoute{}, referrersBy[v1alpha1.RouteEvaluationList](r.Client, indexEvaluationByRoute), builder.WithPredicates(evaluatedFactsChanged)).
		Watches(&v1alpha1.KnowledgeStore{}, evaluationsOfStore(r.Client), builder.WithPredicates(evaluatedFactsChanged)).
		WatchesRawSource(watchReferencedConfigMaps(r.ReferencedConfigMaps, referrersBy[v1alpha1.RouteEvaluationList](r.Client, indexEvaluationByConfigMap))).
		Watches(&corev1.Secret{}, referrersBy[v1alpha1.RouteEvaluationList](r.Client, indexEvaluationBySecret)).
		Named("routeevaluation").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(traced(r, r.Tracing, "RouteEvaluation"))
}
