package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/ingestion"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/lexical"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/tokenize"
)

type noProgress struct{}

func (noProgress) Read(int, int)                 {}
func (noProgress) Synced(knowledge.SyncProgress) {}

// ingestJob waits for the store's ingestion Job other than skip.
func (s *suite) ingestJob(t *testing.T, ns, skip string) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	eventually(t, waitFor, "ingestion Job", func() error {
		jobs := &batchv1.JobList{}
		if err := s.client.List(context.Background(), jobs, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range jobs.Items {
			if jobs.Items[i].Name != skip {
				job = &jobs.Items[i]
				return nil
			}
		}
		return errors.New("no new Job yet")
	})
	return job
}

// runJobLocally does what the Job's pod would: `ragroute ingest` on the
// config the operator rendered, with the source ConfigMaps as folders.
func (s *suite) runJobLocally(t *testing.T, ns, store string, sources map[string]*corev1.ConfigMap) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: store + "-ingest"}, cm); err != nil {
		t.Fatal(err)
	}
	cfg, err := podconfig.ParseIngest(strings.NewReader(cm.Data[podconfig.IngestFileName]))
	if err != nil {
		t.Fatal(err)
	}
	for i, src := range cfg.Sources {
		dir := t.TempDir()
		for name, content := range sources[src.Name].Data {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfg.Sources[i].Root, cfg.Sources[i].Path = dir, dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := knowledge.Connect(ctx, knowledge.Connection{URI: cfg.Milvus.URI, Database: cfg.Milvus.Database})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close(context.Background()) }()
	e := cfg.Embedding
	embeddings := model.NewEmbeddings(model.EmbeddingsConfig{BaseURL: e.BaseURL, Model: e.Model,
		Dimensions: int(e.Dimensions), MaxInputTokens: int(e.MaxInputTokens)})
	analyzer, err := lexical.New(cfg.Lexical.LanguageNames())
	if err != nil {
		t.Fatal(err)
	}
	target := ingestion.Target{
		Store:         knowledge.NewStore(client, cfg.Milvus.Collection, int(e.Dimensions)).WithAnalyzer(analyzer),
		Embedder:      model.WithPrefix(embeddings, e.DocumentPrefix, int(e.MaxInputTokens), tokenize.NewInputCounter()),
		QueryEmbedder: model.WithPrefix(embeddings, e.QueryPrefix, int(e.MaxInputTokens), tokenize.NewInputCounter()),
	}
	if _, err := ingestion.Run(ctx, cfg, target, noProgress{}); err != nil {
		t.Fatalf("ingest as the Job would: %v", err)
	}
}

// finishJob plays the Job controller: the Job completed or failed.
func (s *suite) finishJob(t *testing.T, job *batchv1.Job, failed bool) {
	t.Helper()
	if failed {
		s.failJob(t, job, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit")
	} else {
		s.endJob(t, job, "")
	}
}

// failJob plays the Job controller failing the Job for reason.
func (s *suite) failJob(t *testing.T, job *batchv1.Job, reason, message string) {
	t.Helper()
	s.endJob(t, job, reason+": "+message)
}

// endJob writes a finished Job's status: completed when failure is empty,
// else failed with failure's "reason: message".
func (s *suite) endJob(t *testing.T, job *batchv1.Job, failure string) {
	t.Helper()
	patch := client.MergeFrom(job.DeepCopy())
	now := metav1.Now()
	start := metav1.NewTime(now.Add(-time.Minute))
	job.Status.StartTime = &start
	if reason, message, failed := strings.Cut(failure, ": "); failed {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now},
		}
	} else {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	}
	if err := s.client.Status().Patch(context.Background(), job, patch); err != nil {
		t.Fatalf("patch Job status: %v", err)
	}
}

func TestStoreIngestionJobLifecycle(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	models := testenv.StartModelServer(32)
	t.Cleanup(models.Close)

	handbook := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "handbook-md"}, Data: map[string]string{
		"deploy.md": "# Deploy\n\nApplications are deployed from Git by the controller, which keeps the cluster in the state Git describes.\n",
		"ui.md":     "# Sync Panel\n\nClick the **Sync** button in the toolbar, tick the **Prune** checkbox and click **Synchronize**.\n",
	}}
	store := newStore(ns, "docs", s.milvusURI)
	store.Spec.Milvus.Collection = "docs_" + strings.ReplaceAll(ns, "-", "_")
	store.Spec.Embedding = v1alpha1.EmbeddingModel{BaseURL: models.BaseURL(), Model: "hash", Dimensions: 32, MaxInputTokens: 256,
		QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Sources: []v1alpha1.IngestionSource{
		{Name: "handbook", ConfigMap: &v1alpha1.LocalObjectRef{Name: "handbook-md"}, Principals: []string{"group:staff"}},
	}}
	s.create(t, handbook, store)

	// The operator creates the Job: `ragroute ingest` on the rendered config, the source mounted.
	job := s.ingestJob(t, ns, "")
	pod := job.Spec.Template.Spec
	if c := pod.Containers[0]; c.Image != testRouteImage || strings.Join(c.Args, " ") != "ingest --config=/etc/ragroute/ingest.json" {
		t.Errorf("Job runs %s %v", c.Image, c.Args)
	}
	if !hasVolume(pod, "src-handbook", "handbook-md", "/sources/handbook") || !hasVolume(pod, "config", "docs-ingest", "/etc/ragroute") {
		t.Errorf("Job volumes %+v mounts %+v", pod.Volumes, pod.Containers[0].VolumeMounts)
	}
	s.waitStore(t, ns, "docs", v1alpha1.ConditionIndexed, metav1.ConditionFalse, v1alpha1.ReasonIngestionRunning)
	s.waitStore(t, ns, "docs", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonNoIndex)

	// The Job succeeds: the store reports the index routes will search.
	s.runJobLocally(t, ns, "docs", map[string]*corev1.ConfigMap{"handbook": handbook})
	s.finishJob(t, job, false)
	got := s.waitStore(t, ns, "docs", v1alpha1.ConditionIndexed, metav1.ConditionTrue, v1alpha1.ReasonIndexed)
	if !isReady(got.Status.Conditions) || got.Status.Rows != 2 || got.Status.IndexGeneration != 1 ||
		got.Status.EmbedderFingerprint == "" || got.Status.LastIngestion == nil || got.Status.LastIngestion.Result != "Succeeded" {
		t.Fatalf("status after a successful ingestion: %+v", got.Status)
	}
	// The store names the embedder that built what serves (routes compare it).
	named := v1alpha1.IndexEmbedder{Model: "hash", Dimensions: 32, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	if e := got.Status.IndexEmbedder; e == nil || *e != named {
		t.Errorf("status.indexEmbedder %+v, want %+v", e, named)
	}
	// The ingestion measured the embedder's background similarity (two
	// documents, so one title against the other's chunk each way).
	if b := got.Status.Background; b == nil || b.Samples != 2 {
		t.Errorf("status.background after ingesting two documents: %+v", b)
	}
	// It counted the chunks embedded cut to the embedder's input: none of
	// two short ones, and 0 is shown, not left out.
	if n := got.Status.TruncatedChunks; n == nil || *n != 0 {
		t.Errorf("status.truncatedChunks after ingesting two short documents: %v", n)
	}
	// A recheck finds the same background: no status write.
	s.reconcileStoreWritesNothing(t, ns, "docs")

	// Editing a document starts a new run; its failure is reported while
	// the index built before keeps the store Ready.
	handbook.Data["deploy.md"] += "\nRollbacks redeploy an earlier revision.\n"
	if err := s.client.Update(ctx, handbook); err != nil {
		t.Fatal(err)
	}
	second := s.ingestJob(t, ns, job.Name)
	s.finishJob(t, second, true)
	got = s.waitStore(t, ns, "docs", v1alpha1.ConditionIndexed, metav1.ConditionFalse, v1alpha1.ReasonIngestionFailed)
	indexed := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionIndexed)
	if !strings.Contains(indexed.Message, "BackoffLimitExceeded") || !strings.Contains(indexed.Message, "generation 1 keeps serving") {
		t.Errorf("Indexed message %q", indexed.Message)
	}
	if !isReady(got.Status.Conditions) || got.Status.LastIngestion.Result != "Failed" {
		t.Errorf("after a failed re-ingestion: ready %v, last ingestion %+v", isReady(got.Status.Conditions), got.Status.LastIngestion)
	}
}

func TestStoreReportsARefusedIngestionApply(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()

	// A quota of no Jobs: the API server's admission refuses the ingest Job.
	// Without a quota controller here, the test writes the quota's status.
	noJobs := corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-jobs"},
		Spec: corev1.ResourceQuotaSpec{Hard: noJobs}}
	s.create(t, quota)
	quota.Status = corev1.ResourceQuotaStatus{Hard: noJobs, Used: noJobs}
	if err := s.client.Status().Update(ctx, quota); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, "quota in force", func() error {
		probe := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}, Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}}
		if err := s.client.Create(ctx, probe, client.DryRunAll); !apierrors.IsForbidden(err) {
			return fmt.Errorf("dry-run Job create: %v", err)
		}
		return nil
	})
	faq := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "faq-md"}, Data: map[string]string{"faq.md": "# FAQ\n"}}
	store := newStore(ns, "docs", s.milvusURI)
	store.Spec.Milvus.Collection = "refused_" + strings.ReplaceAll(ns, "-", "_")
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Sources: []v1alpha1.IngestionSource{
		{Name: "faq", ConfigMap: &v1alpha1.LocalObjectRef{Name: "faq-md"}},
	}}
	s.create(t, newSecret(ns, "embedder", "apiKey", "k", embedderHost), faq, store)

	// The refusal is in the status, written for the current generation.
	got := s.waitStore(t, ns, "docs", v1alpha1.ConditionIndexed, metav1.ConditionFalse, v1alpha1.ReasonApplyFailed)
	indexed := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionIndexed)
	if !strings.Contains(indexed.Message, "apply ingest Job") || got.Status.ObservedGeneration != got.Generation {
		t.Errorf("Indexed %+v, observed generation %d of %d", indexed, got.Status.ObservedGeneration, got.Generation)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionConnected); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Connected = %+v: the refusal is not a connection problem", c)
	}

	// Once the quota goes, the retry creates the Job.
	if err := s.client.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	s.ingestJob(t, ns, "")
	s.waitStore(t, ns, "docs", v1alpha1.ConditionIndexed, metav1.ConditionFalse, v1alpha1.ReasonIngestionRunning)
}

// TestStoreRefusesToAdoptAForeignJob: a Job with the name of the store's
// current run that the store does not control (here one an admin took
// over by dropping its owner reference) is not force-applied into the
// store's: Indexed names it, and removing it lets the store run its own.
func TestStoreRefusesToAdoptAForeignJob(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	faq := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "faq-md"}, Data: map[string]string{"faq.md": "# FAQ\n"}}
	store := newStore(ns, "docs", s.milvusURI)
	store.Spec.Milvus.Collection = "foreign_" + strings.ReplaceAll(ns, "-", "_")
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Sources: []v1alpha1.IngestionSource{
		{Name: "faq", ConfigMap: &v1alpha1.LocalObjectRef{Name: "faq-md"}},
	}}
	s.create(t, newSecret(ns, "embedder", "apiKey", "k", embedderHost), faq, store)
	job := s.ingestJob(t, ns, "")
	s.waitStore(t, ns, "docs", v1alpha1.ConditionIndexed, metav1.ConditionFalse, v1alpha1.ReasonIngestionRunning)

	disown := client.MergeFrom(job.DeepCopy())
	job.OwnerReferences = nil
	if err := s.client.Patch(ctx, job, disown); err != nil {
		t.Fatal(err)
	}
	got := s.waitStore(t, ns, "docs", v1alpha1.ConditionIndexed, metav1.ConditionFalse, v1alpha1.ReasonChildConflict)
	indexed := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionIndexed)
	if want := fmt.Sprintf(`ingest Job %q exists and is not owned by this store; rename the store or remove it`, job.Name); !strings.Contains(indexed.Message, want) {
		t.Errorf("Indexed message %q, want it to contain %q", indexed.Message, want)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionConnected); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Connected = %+v: the conflict is not a connection problem", c)
	}
	if err := s.client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatal(err)
	}
	if len(job.OwnerReferences) != 0 {
		t.Fatalf("the foreign Job was adopted: %+v", job.OwnerReferences)
	}

	// The admin removes it: the store's next reconcile runs its own Job of
	// that name. Nothing watches a Job the store does not own, so that
	// reconcile (the recheck, a minute away here) is run by hand.
	if err := s.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, "the foreign Job gone", func() error {
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("get: %v", err)
		}
		return nil
	})
	r := &KnowledgeStoreReconciler{Client: s.client, APIReader: s.client, Recorder: events.NewFakeRecorder(10), Clock: clock.RealClock{},
		Probe: knowledge.Probe, ProbeTimeout: 3 * time.Second, RecheckAfter: time.Minute, RetryAfter: time.Second,
		ReadIndex: knowledge.ReadIndexState, Image: testRouteImage, ImagePullSecrets: []string{testPullSecret}}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(store)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	eventually(t, waitFor, "the store's own Job", func() error {
		again := &batchv1.Job{}
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(job), again); err != nil {
			return err
		}
		if again.UID == job.UID || !metav1.IsControlledBy(again, got) {
			return fmt.Errorf("Job %s: uid %s, owners %+v", again.Name, again.UID, again.OwnerReferences)
		}
		return nil
	})
	s.waitStore(t, ns, "docs", v1alpha1.ConditionIndexed, metav1.ConditionFalse, v1alpha1.ReasonIngestionRunning)
}

func hasVolume(pod corev1.PodSpec, name, configMap, mountPath string) bool {
	for _, v := range pod.Volumes {
		if v.Name == name && v.ConfigMap != nil && v.ConfigMap.Name == configMap {
			for _, m := range pod.Containers[0].VolumeMounts {
				if m.Name == name && m.MountPath == mountPath && m.ReadOnly {
					return true
				}
			}
		}
	}
	return false
}

// A run past spec.ingestion.timeout is stopped by Kubernetes (the Job's
// activeDeadlineSeconds) and the store says so: Indexed=False, reason
// IngestionTimedOut, naming the timeout.
func TestIngestionPastItsTimeoutIsReported(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	faq := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "faq-md"}, Data: map[string]string{"a.md": "# A\n\nText.\n"}}
	store := newStore(ns, "docs", s.milvusURI)
	store.Spec.Milvus.Collection = "docs_" + strings.ReplaceAll(ns, "-", "_")
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Timeout: &metav1.Duration{Duration: 5 * time.Minute},
		Sources: []v1alpha1.IngestionSource{{Name: "faq", ConfigMap: &v1alpha1.LocalObjectRef{Name: "faq-md"}}}}
	s.create(t, newSecret(ns, "embedder", "apiKey", "k", embedderHost), faq, store)

	job := s.ingestJob(t, ns, "")
	if d := job.Spec.ActiveDeadlineSeconds; d == nil || *d != 300 {
		t.Fatalf("the Job's activeDeadlineSeconds is %v, want 300 (spec.ingestion.timeout 5m)", d)
	}
	s.failJob(t, job, batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline")
	got := s.waitStore(t, ns, "docs", v1alpha1.ConditionIndexed, metav1.ConditionFalse, v1alpha1.ReasonIngestionTimedOut)
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionIndexed); !strings.Contains(c.Message, "spec.ingestion.timeout (5m0s)") {
		t.Errorf("Indexed message %q does not name the timeout", c.Message)
	}
	if got.Status.LastIngestion == nil || got.Status.LastIngestion.Result != "Failed" {
		t.Errorf("last ingestion %+v", got.Status.LastIngestion)
	}
}
