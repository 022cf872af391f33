package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// The KnowledgeStore phases, in the order Reconcile runs them under the
// phase contract (phases.go): resolve Secrets, probe Milvus, apply the
// ingestion, read the index state. A broken Secret reference stops them (a
// referenceError). Milvus not answering is a fact (facts.probeErr), and so
// is an ingestion that cannot run (facts.ingestErr: a missing source, a
// config that cannot be rendered, an ingestion child owned by someone
// else): it stops the ingestion, but what the alias serves is still read,
// so a working index keeps the store Ready. A refused ingestion write is a
// refusedWrite: the index is read all the same.

// resolveSecrets resolves the store's Secrets into a Milvus connection. The
// embedder key and git credentials are checked too: routes and ingestion
// need them. Milvus is not tried without them.
func (r *KnowledgeStoreReconciler) resolveSecrets(ctx context.Context, s *storeScope) error {
	conn, err := r.connection(ctx, s.store)
	s.conn = conn
	return err
}

// connection is the Milvus connection the store's Secrets resolve to; a
// missing Secret or key is a referenceError.
func (r *KnowledgeStoreReconciler) connection(ctx context.Context, store *v1alpha1.KnowledgeStore) (knowledge.Connection, error) {
	m := store.Spec.Milvus
	conn := knowledge.Connection{URI: m.URI, Database: m.Database}
	if m.TLS != nil {
		conn.TLSServerName, conn.TLSInsecureSkipVerify = m.TLS.ServerName, m.TLS.InsecureSkipVerify
	}
	for _, use := range storeSecretKeys(&store.Spec) {
		secret, err := r.secrets().sendable(ctx, store.Namespace, use)
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
			secret, err := r.secrets().whole(ctx, store.Namespace, field, source.Git.SecretRef.Name)
			if err != nil {
				return knowledge.Connection{}, err
			}
			to := destination{"spec.ingestion.sources[" + source.Name + "].git.url", source.Git.URL, hostPort}
			if refusal := secretHostRefusal(secret, field, to); refusal != nil {
				return knowledge.Connection{}, refusal
			}
		}
	}
	return conn, nil
}

// probeMilvus asks Milvus for its version (and whether the database
// exists) within ProbeTimeout. A probe that Milvus did not answer ends at
// the deadline whatever the failure: a closed port or a missing host
// already does (the client retries until then), while another server
// answers at once, and when the status changes would tell the two apart
// (milvusProblem keeps the words alike).
func (r *KnowledgeStoreReconciler) probeMilvus(ctx context.Context, s *storeScope) error {
	ctx, cancel := context.WithTimeout(ctx, r.ProbeTimeout)
	defer cancel()
	info, err := r.Probe(ctx, s.conn)
	s.facts.version, s.facts.probeErr = info.Version, err
	if err != nil && !milvusAnswered(err) && uriDialable(s.conn.URI) {
		<-ctx.Done()
	}
	return nil
}

// applyIngestion keeps a connected store's ingestion ConfigMap, Job and
// CronJob (with a schedule; without one, a CronJob the store controls is
// deleted) in line with its spec, in that order, through childApplier, and
// observes the current Job. A missing source ConfigMap, a config that
// cannot be rendered and an ingestion child owned by someone else are
// recorded as facts.ingestErr.
func (r *KnowledgeStoreReconciler) applyIngestion(ctx context.Context, s *storeScope) error {
	if !s.facts.connected() || !s.facts.ingestion {
		return nil
	}
	store := s.store
	runHash := sha256.New()
	if err := r.hashSources(ctx, s, runHash); err != nil || s.facts.ingestErr != nil {
		return err
	}

	cfg := renderIngestConfig(store)
	s.facts.fingerprint = cfg.Embedding.Fingerprint()
	data, err := marshalIngestConfig(cfg)
	if err != nil {
		if refErr, ok := asReferenceError(err); ok {
			s.facts.ingestErr, s.renderFailed = refErr, true
			return nil
		}
		return err
	}
	// The config is valid, its languages with it.
	if s.facts.analyzer, err = specAnalyzer(store); err != nil {
		return fmt.Errorf("keyword analyzer of the store: %w", err)
	}
	runHash.Write(data)
	env := storeSecretKeys(&store.Spec)
	// What the pod runs is part of the run: a Job's pod template is
	// immutable, so any change to it (an image, a pull Secret, what a
	// newer operator builds) means a new Job.
	pod := buildIngestPodTemplate(store, r.Image, "", env)
	withPullSecrets(pod.Spec, r.ImagePullSecrets)
	podData, err := json.Marshal(pod)
	if err != nil {
		return fmt.Errorf("hash the ingest pod: %w", err)
	}
	runHash.Write(podData)
	hash := hex.EncodeToString(runHash.Sum(nil))

	job := buildIngestJob(store, r.Image, hash, env)
	withPullSecrets(job.Spec.Template.Spec, r.ImagePullSecrets)
	var cron *batchv1ac.CronJobApplyConfiguration // nil: no schedule, no CronJob
	if store.Spec.Ingestion.Schedule != "" {
		cron = buildIngestCronJob(store, r.Image, hash, env)
		withPullSecrets(cron.Spec.JobTemplate.Spec.Template.Spec, r.ImagePullSecrets)
	}
	children := []child{
		{"ingest ConfigMap", &corev1.ConfigMap{}, ingestConfigMapName(store), desiredState(buildIngestConfigMap(store, data))},
		{"ingest Job", &batchv1.Job{}, ingestJobName(store, hash), desiredState(job)},
		{"ingest CronJob", &batchv1.CronJob{}, ingestCronJobName(store), desiredState(cron)},
	}
	applier := childApplier{client: r.Client, live: r.APIReader, owner: store, ownerKind: "store"}
	if err := applier.apply(ctx, children); err != nil {
		if refErr, ok := asReferenceError(err); ok {
			s.facts.ingestErr = refErr // blocks the ingestion, not the store
			return nil
		}
		return err
	}
	s.facts.job, err = r.observeJob(ctx, store, ingestJobName(store, hash))
	return err
}

// hashSources adds each source ConfigMap's version to the run hash: editing
// a document starts a new run. Only its metadata is read, from the API
// server (the cache holds no ConfigMap a user made). A missing one is recorded as ingestErr.
func (r *KnowledgeStoreReconciler) hashSources(ctx context.Context, s *storeScope, runHash hash.Hash) error {
	for _, src := range s.store.Spec.Ingestion.Sources {
		if src.ConfigMap == nil {
			continue
		}
		cm := configMapMetadata()
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.store.Namespace, Name: src.ConfigMap.Name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				s.facts.ingestErr = &referenceError{Reason: v1alpha1.ReasonConfigMapNotFound,
					Message: fmt.Sprintf("ConfigMap %q of source %q not found", src.ConfigMap.Name, src.Name)}
				return nil
			}
			return fmt.Errorf("get ConfigMap %q: %w", src.ConfigMap.Name, err)
		}
		fmt.Fprintf(runHash, "%s/%s\n", cm.UID, cm.ResourceVersion)
	}
	return nil
}

// observeJob reads the state of the store's current ingestion Job, if it
// exists.
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
			if c.Reason == batchv1.JobReasonDeadlineExceeded {
				state.timedOut = true
				state.message = fmt.Sprintf("Job %s ran past spec.ingestion.timeout (%s) and was stopped: a source or the embedder may stall, or the run needs a longer timeout",
					name, jobDeadline(job))
			}
		}
	}
	return state, nil
}

// jobDeadline is the Job's activeDeadlineSeconds as a duration, "unset"
// for a Job made before the operator set one.
func jobDeadline(job *batchv1.Job) string {
	if job.Spec.ActiveDeadlineSeconds == nil {
		return "unset"
	}
	return (time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second).String()
}

// readIndexState asks Milvus what a connected store's alias serves. An
// unreadable index counts as Milvus not answering.
func (r *KnowledgeStoreReconciler) readIndexState(ctx context.Context, s *storeScope) error {
	if !s.facts.connected() || !s.facts.ingestion || s.renderFailed {
		return nil
	}
	store := s.store
	ctx, cancel := context.WithTimeout(ctx, r.ProbeTimeout+5*time.Second)
	defer cancel()
	state, err := r.ReadIndex(ctx, s.conn, store.Spec.Milvus.Collection, int(store.Spec.Embedding.Dimensions))
	if err != nil {
		s.facts.probeErr = fmt.Errorf("read the index behind alias %s: %w", store.Spec.Milvus.Collection, err)
		return nil
	}
	s.facts.index = &state
	return nil
}

func (r *KnowledgeStoreReconciler) secrets() secretReader {
	return secretReader{cache: r.Client, live: r.APIReader}
}
