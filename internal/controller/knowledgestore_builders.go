package controller

import (
	"fmt"
	"path"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

const ingestConfigPath = "/etc/ragroute"

func ingestConfigMapName(store *v1alpha1.KnowledgeStore) string { return store.Name + "-ingest" }

func ingestCronJobName(store *v1alpha1.KnowledgeStore) string { return store.Name + "-ingest" }

// ingestJobName changes with everything the run depends on, so a change
// starts a new Job and an unchanged store never ingests twice.
func ingestJobName(store *v1alpha1.KnowledgeStore, runHash string) string {
	return fmt.Sprintf("%s-ingest-%s", truncateName(store.Name, 40), runHash[:10])
}

func storeLabels(store *v1alpha1.KnowledgeStore) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "ragroute-ingest",
		"app.kubernetes.io/instance": store.Name,
		managedByLabel:               managedByValue,
		"ragroute.io/knowledgestore": store.Name,
	}
}

func storeOwner(store *v1alpha1.KnowledgeStore) *metav1ac.OwnerReferenceApplyConfiguration {
	return controllerOwner("KnowledgeStore", store)
}

func buildIngestConfigMap(store *v1alpha1.KnowledgeStore, data []byte) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(ingestConfigMapName(store), store.Namespace).
		WithLabels(storeLabels(store)).
		WithOwnerReferences(storeOwner(store)).
		WithData(map[string]string{podconfig.IngestFileName: string(data)})
}

// buildIngestPodTemplate runs `ragroute ingest` with the sources mounted
// read-only; the ingestion never reads the Kubernetes API.
func buildIngestPodTemplate(store *v1alpha1.KnowledgeStore, image, runHash string, env []secretUse) *corev1ac.PodTemplateSpecApplyConfiguration {
	container := corev1ac.Container().
		WithName("ingest").
		WithImage(image).
		WithArgs("ingest", "--config="+ingestConfigPath+"/"+podconfig.IngestFileName).
		WithVolumeMounts(corev1ac.VolumeMount().WithName("config").WithMountPath(ingestConfigPath).WithReadOnly(true),
			corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp")).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")})).
		WithSecurityContext(restrictedContainerSecurity())
	for _, use := range env {
		container.WithEnv(corev1ac.EnvVar().WithName(use.env).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(use.ref.Name).WithKey(use.ref.Key))))
	}
	volumes := []*corev1ac.VolumeApplyConfiguration{
		corev1ac.Volume().WithName("config").WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(ingestConfigMapName(store))),
		corev1ac.Volume().WithName("tmp").WithEmptyDir(corev1ac.EmptyDirVolumeSource().WithSizeLimit(resource.MustParse("2Gi"))),
	}
	for _, src := range store.Spec.Ingestion.Sources {
		volume := corev1ac.Volume().WithName("src-" + src.Name)
		switch {
		case src.ConfigMap != nil:
			volume.WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(src.ConfigMap.Name))
		case src.PVC != nil:
			volume.WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(src.PVC.ClaimName).WithReadOnly(true))
		case src.Git != nil && src.Git.SecretRef != nil:
			// A git source is cloned into /tmp; only its credentials are
			// mounted, readable by the pod's group (fsGroup): a pod's
			// volumes are root's, and the process is not.
			volumes = append(volumes, corev1ac.Volume().WithName("git-"+src.Name).WithSecret(
				corev1ac.SecretVolumeSource().WithSecretName(src.Git.SecretRef.Name).WithDefaultMode(0o440)))
			container.WithVolumeMounts(corev1ac.VolumeMount().WithName("git-" + src.Name).
				WithMountPath(path.Join(secretsMountPath, src.Name)).WithReadOnly(true))
			continue
		default:
			continue
		}
		volumes = append(volumes, volume)
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName("src-" + src.Name).
			WithMountPath(sourceMount(src)).WithReadOnly(true))
	}
	return corev1ac.PodTemplateSpec().
		WithLabels(storeLabels(store)).
		WithAnnotations(map[string]string{"ragroute.io/ingest-hash": runHash}).
		WithSpec(restrictedPodSpec().
			WithRestartPolicy(corev1.RestartPolicyNever).
			WithContainers(container).
			WithVolumes(volumes...))
}

// buildIngestJob is one ingestion run of the store's current spec.
func buildIngestJob(store *v1alpha1.KnowledgeStore, image, runHash string, env []secretUse) *batchv1ac.JobApplyConfiguration {
	return batchv1ac.Job(ingestJobName(store, runHash), store.Namespace).
		WithLabels(storeLabels(store)).
		WithOwnerReferences(storeOwner(store)).
		WithSpec(ingestJobSpec(store, image, runHash, env))
}

// ingestJobSpec is one run, Job or scheduled alike, stopped by Kubernetes
// at spec.ingestion.timeout (its retries included): a stalled run would
// otherwise hold the CronJob's Forbid policy and skip every later one.
func ingestJobSpec(store *v1alpha1.KnowledgeStore, image, runHash string, env []secretUse) *batchv1ac.JobSpecApplyConfiguration {
	return batchv1ac.JobSpec().
		WithBackoffLimit(2).
		WithActiveDeadlineSeconds(int64(ingestionTimeout(store).Seconds())).
		WithTTLSecondsAfterFinished(7 * 24 * 3600).
		WithTemplate(buildIngestPodTemplate(store, image, runHash, env))
}

// buildIngestCronJob re-ingests on the store's schedule.
func buildIngestCronJob(store *v1alpha1.KnowledgeStore, image, runHash string, env []secretUse) *batchv1ac.CronJobApplyConfiguration {
	return batchv1ac.CronJob(ingestCronJobName(store), store.Namespace).
		WithLabels(storeLabels(store)).
		WithOwnerReferences(storeOwner(store)).
		WithSpec(batchv1ac.CronJobSpec().
			WithSchedule(store.Spec.Ingestion.Schedule).
			WithConcurrencyPolicy(batchv1.ForbidConcurrent).
			WithSuccessfulJobsHistoryLimit(1).
			WithFailedJobsHistoryLimit(1).
			WithJobTemplate(batchv1ac.JobTemplateSpec().WithLabels(storeLabels(store)).
				WithSpec(ingestJobSpec(store, image, runHash, env))))
}

// ingestionTimeout is how long one ingestion run of store may take.
func ingestionTimeout(store *v1alpha1.KnowledgeStore) time.Duration {
	return durationOr(store.Spec.Ingestion.Timeout, podconfig.Duration(v1alpha1.DefaultIngestionTimeout)).Std()
}
