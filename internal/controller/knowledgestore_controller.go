package controller

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/trace"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// MilvusProbe checks that Milvus answers at a connection.
type MilvusProbe func(ctx context.Context, conn knowledge.Connection) (knowledge.ServerInfo, error)

// IndexReader reads what a store's alias serves.
type IndexReader func(ctx context.Context, conn knowledge.Connection, alias string, dim int) (knowledge.IndexState, error)

// KnowledgeStoreReconciler connects a KnowledgeStore and runs its
// ingestion: it resolves the store's Secrets, checks Milvus answers, keeps
// the ingestion ConfigMap, Job and CronJob in line with spec.ingestion, and
// reads what the alias serves. It writes all of the store's conditions:
// Connected, SchemaReady, Indexed and Ready.
type KnowledgeStoreReconciler struct {
	// Tracing, when set, makes each reconcile a span (tracing.go).
	Tracing trace.TracerProvider
	client.Client
	// APIReader reads past the cache: whether a referenced Secret exists
	// without the label that would put it there (metadata only), a
	// ConfigMap a spec references, and a child the cache lacks.
	APIReader client.Reader
	// ReferencedConfigMaps is the metadata of every ConfigMap, through
	// which a change to a source ConfigMap reaches the store.
	ReferencedConfigMaps cache.Cache
	Recorder             events.EventRecorder
	Clock                clock.PassiveClock
	Probe                MilvusProbe
	// ProbeTimeout bounds one connection check.
	ProbeTimeout time.Duration
	// RecheckAfter is how soon a connected store is checked again.
	RecheckAfter time.Duration
	// RetryAfter is how soon an unreachable store is checked again.
	RetryAfter time.Duration
	// ReadIndex reads what a store's alias serves.
	ReadIndex IndexReader
	// Image runs ingestion Jobs, pulled with ImagePullSecrets.
	Image            string
	ImagePullSecrets []string
	// MaxConcurrentReconciles is how many stores are reconciled at once
	// (0: controller-runtime's default, one).
	MaxConcurrentReconciles int
}

// +kubebuilder:rbac:groups=ragroute.io,resources=knowledgestores,verbs=get;list;watch
// +kubebuilder:rbac:groups=ragroute.io,resources=knowledgestores/status,verbs=get;update;patch
// Its children's owner references set blockOwnerDeletion, which the
// OwnerReferencesPermissionEnforcement admission plugin allows only with
// update on the owner's finalizers.
// +kubebuilder:rbac:groups=ragroute.io,resources=knowledgestores/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list;watch;create;update;patch;delete

// storeScope carries what one reconcile of a store found, phase to phase.
// The phases write the facts directly (phases.go says why).
type storeScope struct {
	store *v1alpha1.KnowledgeStore
	// conn is the Milvus connection the store's Secrets resolve to.
	conn knowledge.Connection
	// renderFailed: the ingest config could not be rendered, so nothing
	// was applied and the index is not read this time.
	renderFailed bool
	facts        storeFacts
}

// Reconcile brings one store's connection, ingestion children and status
// in line with its spec, its Secrets and what Milvus serves.
func (r *KnowledgeStoreReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	store := &v1alpha1.KnowledgeStore{}
	if err := r.Get(ctx, req.NamespacedName, store); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !store.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // children go with their owner
	}

	s := &storeScope{store: store, facts: storeFacts{uri: store.Spec.Milvus.URI, database: store.Spec.Milvus.Database,
		owner: collectionOwner(store), ingestion: hasIngestion(store)}}
	out, err := runPhases(ctx, s, r.resolveSecrets, r.probeMilvus, r.applyIngestion, r.readIndexState)
	if err != nil {
		return ctrl.Result{}, err // a failed read says nothing about the store: keep its status
	}
	s.facts.refErr, s.facts.applyErr = out.refErr, out.applyErr
	if s.facts.probeErr != nil {
		// The status shows only the class (milvusProblem); the cause is here.
		log.FromContext(ctx).Info("Milvus did not answer", "uri", redactedURI(s.facts.uri), "error", s.facts.probeErr.Error())
	}
	if err := r.applyStoreStatus(ctx, s); err != nil {
		return ctrl.Result{}, errors.Join(s.facts.applyErr, err)
	}
	if s.facts.applyErr != nil {
		return ctrl.Result{}, s.facts.applyErr // retried with backoff; the status says why
	}
	return ctrl.Result{RequeueAfter: s.facts.recheckAfter(r.RecheckAfter, r.RetryAfter)}, nil
}

// applyStoreStatus derives the status from what the phases found.
func (r *KnowledgeStoreReconciler) applyStoreStatus(ctx context.Context, s *storeScope) error {
	store, f := s.store, s.facts
	status := store.Status.DeepCopy()
	status.ObservedGeneration = store.Generation
	now := r.Clock.Now()
	for _, c := range storeConditions(f) {
		setCondition(&status.Conditions, c, store.Generation, now)
	}
	// An ingestion's failure or run shows even while an older generation
	// keeps the store Ready.
	watch := []string{v1alpha1.ConditionReady}
	if f.ingestion {
		watch = append(watch, v1alpha1.ConditionIndexed)
	}
	setProgressConditions(&status.Conditions, store.Generation, now, watch...)
	recordIngestion(status, f)
	if f.connected() {
		status.ServerVersion = f.version
		if becameConnected(store.Status.Conditions, status.LastConnectedTime) {
			status.LastConnectedTime = &metav1.Time{Time: now}
		}
	}
	recordTruncation(r.Recorder, store, store.Status.TruncatedChunks, status.TruncatedChunks)
	recordRefusal(r.Recorder, store, store.Status.RefusedDocuments, status.RefusedDocuments)
	return publishStatus(ctx, r.Client, r.Recorder, store, store.Status.Conditions, status.Conditions, status)
}

// becameConnected reports whether a store that Milvus answered now was not
// Connected before (or never had its connection time recorded):
// status.lastConnectedTime is when the store last became Connected, not
// when it was last checked, so a recheck or a restart writes nothing.
func becameConnected(before []metav1.Condition, lastConnected *metav1.Time) bool {
	return lastConnected == nil || !meta.IsStatusConditionTrue(before, v1alpha1.ConditionConnected)
}

// SetupWithManager registers the reconciler: stores, their ingestion
// children, and the source ConfigMaps and Secrets they reference (through
// field indexes).
func (r *KnowledgeStoreReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.KnowledgeStore{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Owns(&batchv1.CronJob{}).
		Owns(&corev1.ConfigMap{}).
		WatchesRawSource(watchReferencedConfigMaps(r.ReferencedConfigMaps, referrersBy[v1alpha1.KnowledgeStoreList](r.Client, indexStoreBySourceConfigMap))).
		Watches(&corev1.Secret{}, referrersBy[v1alpha1.KnowledgeStoreList](r.Client, indexStoreBySecret)).
		Named("knowledgestore").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(traced(r, r.Tracing, "KnowledgeStore"))
}
