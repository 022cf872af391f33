package controller

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// MilvusProbe checks that Milvus answers at a connection.
type MilvusProbe func(ctx context.Context, conn knowledge.Connection) (knowledge.ServerInfo, error)

// KnowledgeStoreReconciler resolves a KnowledgeStore's Secrets and checks it
// can reach Milvus. Schema and ingestion belong to the ingestion controller,
// which owns the SchemaReady and Indexed conditions.
type KnowledgeStoreReconciler struct {
	client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	Probe    MilvusProbe
	// ProbeTimeout bounds one connection check.
	ProbeTimeout time.Duration
	// RecheckAfter is how soon a connected store is checked again.
	RecheckAfter time.Duration
	// RetryAfter is how soon an unreachable store is checked again.
	RetryAfter time.Duration
	// ReadIndex reads what a store's alias serves.
	ReadIndex IndexReader
	// Image runs ingestion Jobs.
	Image string
}

// +kubebuilder:rbac:groups=ragroute.io,resources=knowledgestores,verbs=get;list;watch
// +kubebuilder:rbac:groups=ragroute.io,resources=knowledgestores/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// Reconcile checks one KnowledgeStore's references and Milvus connection.
func (r *KnowledgeStoreReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, reterr error) {
	store := &v1alpha1.KnowledgeStore{}
	if err := r.Get(ctx, req.NamespacedName, store); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !store.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	status := store.Status.DeepCopy()
	defer func() {
		if reterr == nil {
			status.ObservedGeneration = store.Generation
			reterr = publishStatus(ctx, r.Client, r.Recorder, store, store.Status.Conditions, status.Conditions, status)
		}
	}()

	check := storeCheck{uri: store.Spec.Milvus.URI, ingestion: hasIngestion(store)}
	conn, err := r.connection(ctx, store)
	if err != nil {
		refErr, ok := asReferenceError(err)
		if !ok {
			return ctrl.Result{}, err
		}
		check.refErr = refErr
	} else {
		probeCtx, cancel := context.WithTimeout(ctx, r.ProbeTimeout)
		info, probeErr := r.Probe(probeCtx, conn)
		cancel()
		check.version, check.probeErr = info.Version, probeErr
		if check.connected() && check.ingestion {
			if err := r.reconcileIngestion(ctx, store, conn, &check); err != nil {
				return ctrl.Result{}, err
			}
		}
	}

	now := r.Clock.Now()
	for _, c := range storeConditions(check) {
		setCondition(&status.Conditions, c, store.Generation, now)
	}
	recordIngestion(status, check)
	if check.connected() {
		status.ServerVersion = check.version
		status.LastConnectedTime = &metav1.Time{Time: now}
		if check.job != nil && check.job.running {
			return ctrl.Result{RequeueAfter: r.RetryAfter}, nil // the index changes when the Job ends
		}
		return ctrl.Result{RequeueAfter: r.RecheckAfter}, nil
	}
	return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
}

// connection resolves the store's Secrets into a Milvus connection. The
// embedder key is checked too: routes and ingestion need it.
func (r *KnowledgeStoreReconciler) connection(ctx context.Context, store *v1alpha1.KnowledgeStore) (knowledge.Connection, error) {
	m := store.Spec.Milvus
	conn := knowledge.Connection{URI: m.URI, Database: m.Database}
	if m.TLS != nil {
		conn.TLSServerName, conn.TLSInsecureSkipVerify = m.TLS.ServerName, m.TLS.InsecureSkipVerify
	}
	for _, use := range storeSecretKeys(&store.Spec) {
		secret, err := getSecretKey(ctx, r.Client, store.Namespace, use.field, &use.ref)
		if err != nil {
			return knowledge.Connection{}, err
		}
		if m.TokenSecretRef != nil && use.ref == *m.TokenSecretRef {
			conn.Token = string(secret.Data[use.ref.Key])
		}
	}
	if store.Spec.Ingestion != nil {
		for _, source := range store.Spec.Ingestion.Sources {
			if source.Git == nil || source.Git.SecretRef == nil {
				continue
			}
			field := "spec.ingestion.sources[" + source.Name + "].git.secretRef"
			if _, err := getSecret(ctx, r.Client, store.Namespace, field, source.Git.SecretRef.Name); err != nil {
				return knowledge.Connection{}, err
			}
		}
	}
	return conn, nil
}

// SetupWithManager registers the reconciler for stores and their Secrets.
func (r *KnowledgeStoreReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.KnowledgeStore{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Owns(&batchv1.CronJob{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				return requestsFor(ctx, r.Client, &v1alpha1.KnowledgeStoreList{}, o.GetNamespace(), indexStoreBySourceConfigMap, o.GetName())
			})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				return requestsFor(ctx, r.Client, &v1alpha1.KnowledgeStoreList{}, o.GetNamespace(), indexStoreBySecret, o.GetName())
			})).
		Named("knowledgestore").
		Complete(r)
}
