package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// IndexReader reads what a store's alias serves.
type IndexReader func(ctx context.Context, conn knowledge.Connection, alias string, dim int) (knowledge.IndexState, error)

// jobState is what the current ingestion Job reports.
type jobState struct {
	name     string
	running  bool
	failed   bool
	message  string
	finished *metav1.Time
}

// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list;watch;create;update;patch;delete

// reconcileIngestion keeps the store's ingestion Job (and CronJob) in line
// with its spec and reads what the alias serves. A broken input (a missing
// source ConfigMap) is recorded in check, not returned.
func (r *KnowledgeStoreReconciler) reconcileIngestion(ctx context.Context, store *v1alpha1.KnowledgeStore, conn knowledge.Connection, check *storeCheck) error {
	runHash := sha256.New()
	for _, src := range store.Spec.Ingestion.Sources {
		if src.ConfigMap == nil {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: store.Namespace, Name: src.ConfigMap.Name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				check.ingestErr = &referenceError{Reason: v1alpha1.ReasonConfigMapNotFound,
					Message: fmt.Sprintf("ConfigMap %q of source %q not found", src.ConfigMap.Name, src.Name)}
				return r.readIndex(ctx, store, conn, check)
			}
			return fmt.Errorf("get ConfigMap %q: %w", src.ConfigMap.Name, err)
		}
		// The documents' content is part of the run: editing one starts a new run.
		fmt.Fprintf(runHash, "%s/%s\n", cm.UID, cm.ResourceVersion)
	}

	cfg := renderIngestConfig(store)
	check.fingerprint = cfg.Embedding.Fingerprint()
	data, err := marshalIngestConfig(cfg)
	if err != nil {
		if refErr, ok := asReferenceError(err); ok {
			check.ingestErr = refErr
			return nil
		}
		return err
	}
	runHash.Write(data)
	hash := hex.EncodeToString(runHash.Sum(nil))
	env := storeSecretKeys(&store.Spec)

	if err := r.Apply(ctx, buildIngestConfigMap(store, data), fieldOwner, client.ForceOwnership); err != nil {
		return fmt.Errorf("apply ingest ConfigMap: %w", err)
	}
	if err := r.Apply(ctx, buildIngestJob(store, r.Image, hash, env), fieldOwner, client.ForceOwnership); err != nil {
		return fmt.Errorf("apply ingest Job: %w", err)
	}
	if err := r.reconcileSchedule(ctx, store, hash, env); err != nil {
		return err
	}
	if check.job, err = r.observeJob(ctx, store, ingestJobName(store, hash)); err != nil {
		return err
	}
	return r.readIndex(ctx, store, conn, check)
}

// reconcileSchedule keeps a CronJob while the store has a schedule.
func (r *KnowledgeStoreReconciler) reconcileSchedule(ctx context.Context, store *v1alpha1.KnowledgeStore, hash string, env []secretUse) error {
	if store.Spec.Ingestion.Schedule != "" {
		if err := r.Apply(ctx, buildIngestCronJob(store, r.Image, hash, env), fieldOwner, client.ForceOwnership); err != nil {
			return fmt.Errorf("apply ingest CronJob: %w", err)
		}
		return nil
	}
	cron := &batchv1.CronJob{}
	err := r.Get(ctx, client.ObjectKey{Namespace: store.Namespace, Name: store.Name + "-ingest"}, cron)
	if err == nil && metav1.IsControlledBy(cron, store) {
		if err := r.Delete(ctx, cron); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete unscheduled CronJob: %w", err)
		}
		return nil
	}
	return client.IgnoreNotFound(err)
}

func (r *KnowledgeStoreReconciler) observeJob(ctx context.Context, store *v1alpha1.KnowledgeStore, name string) (*jobState, error) {
	job := &batchv1.Job{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: store.Namespace, Name: name}, job); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	state := &jobState{name: name, running: true}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			state.running, state.finished = false, job.Status.CompletionTime
		case batchv1.JobFailed:
			state.running, state.failed = false, true
			state.message = fmt.Sprintf("Job %s failed: %s: %s", name, c.Reason, c.Message)
			state.finished = &c.LastTransitionTime
		}
	}
	return state, nil
}

// readIndex asks Milvus what the alias serves.
func (r *KnowledgeStoreReconciler) readIndex(ctx context.Context, store *v1alpha1.KnowledgeStore, conn knowledge.Connection, check *storeCheck) error {
	ctx, cancel := context.WithTimeout(ctx, r.ProbeTimeout+5*time.Second)
	defer cancel()
	state, err := r.ReadIndex(ctx, conn, store.Spec.Milvus.Collection, int(store.Spec.Embedding.Dimensions))
	if err != nil {
		check.probeErr = fmt.Errorf("read the index behind alias %s: %w", store.Spec.Milvus.Collection, err)
		return nil
	}
	check.index = &state
	return nil
}
