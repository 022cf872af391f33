package controller

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// The RouteEvaluation phases, in the order Reconcile runs them under the
// phase contract (phases.go): observe the active run (a finished one moves
// to lastRun), write its misses, resolve what a next run needs (the route,
// its store's generation, the questions, the identity Secret), and start
// the next run when one is due. A broken reference stops the resolving:
// no run starts, and a finished one is still recorded.

// observeActiveRun reads the active run's Job and pod; a run that ended
// becomes lastRun and the run before it previousRun.
func (r *RouteEvaluationReconciler) observeActiveRun(ctx context.Context, s *evaluationScope) error {
	active := s.status.Active
	if active == nil {
		return nil
	}
	key := types.NamespacedName{Namespace: s.evaluation.Namespace, Name: active.Job}
	job, err := r.runJob(ctx, key)
	if err != nil {
		return err
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabels{evalRunLabel: active.Job}); err != nil {
		return fmt.Errorf("list the pods of evaluation Job %s: %w", key, err)
	}
	run, misses, done := finishRun(*active, job, podOfRun(pods.Items, job), s.now)
	if !done {
		return nil
	}
	s.finished, s.misses = &run, misses
	s.status.PreviousRun, s.status.LastRun, s.status.Active = s.status.LastRun, &run, nil
	return nil
}

// runJob is the active run's Job, nil when it is gone. The Jobs' cache
// may lag the evaluation's (the two are separate watches), and a Job
// created a moment ago but missing from it is not gone: a miss is
// confirmed on the API server before the run is recorded as failed.
func (r *RouteEvaluationReconciler) runJob(ctx context.Context, key types.NamespacedName) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	err := r.Get(ctx, key, job)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, job)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get evaluation Job %s: %w", key, err)
	}
	return job, nil
}

// writeResults writes a finished run's misses to the results ConfigMap.
func (r *RouteEvaluationReconciler) writeResults(ctx context.Context, s *evaluationScope) error {
	if s.finished == nil || s.misses == nil {
		return nil
	}
	cm := buildEvaluationResults(s.evaluation, s.finished, s.misses)
	applier := childApplier{client: r.Client, live: r.APIReader, owner: s.evaluation, ownerKind: "evaluation"}
	if err := applier.apply(ctx, []child{{"results ConfigMap", &corev1.ConfigMap{}, *cm.Name, desiredState(cm)}}); err != nil {
		return err
	}
	s.status.ResultsConfigMap = *cm.Name
	return nil
}

// resolveEvaluation resolves the route (Ready and rolled out: every
// replica serves its current config hash),
// its store's index generation, the question set and the identity's
// Secret key (labelled ragroute.io/use=true), and parses the schedule.
func (r *RouteEvaluationReconciler) resolveEvaluation(ctx context.Context, s *evaluationScope) error {
	e := s.evaluation
	if e.Spec.Schedule != "" {
		schedule, err := parseSchedule(e.Spec.Schedule)
		if err != nil {
			return &referenceError{Reason: v1alpha1.ReasonInvalidSchedule, Message: "spec." + err.Error()}
		}
		s.schedule = schedule
	}
	route := &v1alpha1.QueryRoute{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: e.Namespace, Name: e.Spec.RouteRef.Name}, route); err != nil {
		if apierrors.IsNotFound(err) {
			return &referenceError{Reason: v1alpha1.ReasonQueryRouteMissing,
				Message: fmt.Sprintf("QueryRoute %q referenced by spec.routeRef not found", e.Spec.RouteRef.Name)}
		}
		return fmt.Errorf("get QueryRoute %q: %w", e.Spec.RouteRef.Name, err)
	}
	s.route = route
	if refusal := identityRefusal(e.Spec.Identity, route); refusal != nil {
		return refusal
	}
	if !routeServesItsSpec(route) {
		// A run now would score the route's outage, or its old config
		// on the pods a roll has not replaced yet.
		return &referenceError{Reason: v1alpha1.ReasonQueryRouteNotReady,
			Message: fmt.Sprintf("QueryRoute %q is not Ready or still rolling out: its replicas do not all serve its current configuration yet", route.Name)}
	}
	s.measured.configHash = route.Status.ConfigHash
	store := &v1alpha1.KnowledgeStore{}
	err := r.Get(ctx, types.NamespacedName{Namespace: e.Namespace, Name: route.Spec.KnowledgeStoreRef.Name}, store)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("get KnowledgeStore %q: %w", route.Spec.KnowledgeStoreRef.Name, err)
	}
	s.measured.storeGeneration = store.Status.IndexGeneration // 0 when missing: the route says why
	questions, err := getConfigMapKey(ctx, r.APIReader, e.Namespace, "spec.questions", e.Spec.Questions)
	if err != nil {
		return err
	}
	s.measured.questionsHash = questionsHash(questions)
	field, ref := identitySecretRef(e.Spec.Identity)
	_, err = secretReader{cache: r.Client, live: r.APIReader}.key(ctx, e.Namespace, field, &ref)
	return err
}

// identityRefusal is why the evaluation's identity cannot ask route: proxy
// headers for a route that takes none, a token for one without JWT.
func identityRefusal(identity v1alpha1.EvaluationIdentity, route *v1alpha1.QueryRoute) *referenceError {
	switch {
	case identity.TrustedProxy != nil && route.Spec.Auth.TrustedProxy == nil:
		return &referenceError{Reason: v1alpha1.ReasonIdentityNotSupported,
			Message: fmt.Sprintf("spec.identity.trustedProxy: QueryRoute %q does not sit behind a trusted proxy (spec.auth.trustedProxy); use tokenSecretRef", route.Name)}
	case identity.TokenSecretRef != nil && route.Spec.Auth.JWT == nil:
		return &referenceError{Reason: v1alpha1.ReasonIdentityNotSupported,
			Message: fmt.Sprintf("spec.identity.tokenSecretRef: QueryRoute %q verifies no bearer tokens (spec.auth.jwt); use trustedProxy", route.Name)}
	}
	return nil
}

// startRun starts the next run when one is due (nextRun) and notes when
// the schedule next fires.
func (r *RouteEvaluationReconciler) startRun(ctx context.Context, s *evaluationScope) error {
	e := s.evaluation
	d := nextRun(s.status, e.Spec.OnChange, s.schedule, s.measured, e.CreationTimestamp.Time, s.now)
	s.requeueAfter = d.after
	if d.trigger == "" {
		return nil
	}
	name := evaluationJobName(e, runHash(e.UID, s.status, d, s.measured))
	job := buildEvaluationJob(evaluationRun{evaluation: e, route: s.route, image: r.Image, job: name})
	withPullSecrets(job.Spec.Template.Spec, r.ImagePullSecrets)
	applier := childApplier{client: r.Client, live: r.APIReader, owner: e, ownerKind: "evaluation"}
	if err := applier.apply(ctx, []child{{"evaluation Job", &batchv1.Job{}, name, desiredState(job)}}); err != nil {
		return err
	}
	started := metav1.NewTime(s.now)
	s.status.Active = &v1alpha1.EvaluationRun{Job: name, Trigger: d.trigger, StartTime: &started, Result: runRunning,
		RouteConfigHash: s.measured.configHash, StoreGeneration: s.measured.storeGeneration, QuestionsHash: s.measured.questionsHash}
	if d.trigger == triggerSchedule {
		s.status.LastScheduleTime = &metav1.Time{Time: d.scheduledAt}
	}
	return nil
}
