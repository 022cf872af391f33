package controller

import (
	"cmp"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// The paths of an evaluation run's pod: the question set and the identity
// Secret's key, both mounted read-only.
const (
	evalQuestionsPath = "/etc/ragroute/questions"
	evalQuestionsFile = "questions.jsonl"
	evalIdentityPath  = "/var/run/secrets/ragroute/identity"
	// evalIdentityFile is the identity key's file, whatever the key's
	// name (a key may be a name no path may be).
	evalIdentityFile   = "value"
	evalTerminationLog = "/dev/termination-log"
	// evalDeadlineSlack is how much longer the Job may run than the
	// command's own --deadline, so the command reports a deadline itself.
	evalDeadlineSlack = time.Minute
)

// evalRunLabel carries a run's Job name on its pod, so the operator finds
// the pod (and its termination message) without the Job controller's labels.
const evalRunLabel = "ragroute.io/evaluation-run"

// evalAppName is the app.kubernetes.io/name of every run's Job and pod:
// the only pods the operator caches, and those a route's NetworkPolicy
// admits.
const evalAppName = "ragroute-eval"

// evalRouteLabel names the route a run's pod asks, so the route's
// NetworkPolicy can admit it (buildRouteNetworkPolicy).
const evalRouteLabel = "ragroute.io/evaluated-route"

// evaluationRun is what one run needs beyond its RouteEvaluation: the route
// it asks (its endpoint and identity header names), the image, and the
// run's name.
type evaluationRun struct {
	evaluation *v1alpha1.RouteEvaluation
	route      *v1alpha1.QueryRoute
	image      string
	job        string
}

// evaluationJobName is unique to a run: the evaluation's name and a hash
// of what the run measures and when it was due.
func evaluationJobName(evaluation *v1alpha1.RouteEvaluation, runHash string) string {
	return fmt.Sprintf("%s-%s", truncateName(evaluation.Name, 48), runHash[:10])
}

func evaluationLabels(evaluation *v1alpha1.RouteEvaluation) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      evalAppName,
		"app.kubernetes.io/instance":  evaluation.Name,
		managedByLabel:                managedByValue,
		"ragroute.io/routeevaluation": evaluation.Name,
	}
}

func evaluationOwner(evaluation *v1alpha1.RouteEvaluation) *metav1ac.OwnerReferenceApplyConfiguration {
	return controllerOwner("RouteEvaluation", evaluation)
}

// evaluationTimeout is how long one run may take.
func evaluationTimeout(evaluation *v1alpha1.RouteEvaluation) time.Duration {
	return durationOr(evaluation.Spec.Timeout, podconfig.Duration(v1alpha1.DefaultEvaluationTimeout)).Std()
}

// evaluationArgs is the `ragroute eval-route` command line of a run. Secret
// values are only ever named by file.
func evaluationArgs(run evaluationRun) []string {
	spec := run.evaluation.Spec
	scope := spec.Scope
	if scope == "" {
		scope = v1alpha1.EvaluationScopeRetrieval
	}
	maxConcurrent := spec.MaxConcurrent
	if maxConcurrent == 0 {
		maxConcurrent = v1alpha1.DefaultEvaluationMaxConcurrent
	}
	args := []string{"eval-route",
		"--route=" + routeEndpoint(run.route),
		"--questions=" + path.Join(evalQuestionsPath, evalQuestionsFile),
		"--source=" + spec.Source,
		"--scope=" + scope,
		"--max-concurrent=" + strconv.Itoa(int(maxConcurrent)),
		"--deadline=" + evaluationTimeout(run.evaluation).String(),
		"--termination-log=" + evalTerminationLog,
	}
	if scope != v1alpha1.EvaluationScopeRetrieval {
		// Turns report their answerability scores: the run calibrates
		// the route's threshold at the evaluation's alpha.
		args = append(args, "--calibration-alpha="+strconv.FormatFloat(calibrationAlpha(spec), 'g', -1, 64))
	}
	if hash := run.route.Status.ConfigHash; hash != "" {
		// Only the measured config's answers count: a stopping pod of
		// the old one still answers for a few seconds after a roll.
		args = append(args, "--config-hash="+hash)
	}
	switch id := spec.Identity; {
	case id.TrustedProxy != nil:
		user, groups, secret := proxyHeaderNames(run.route)
		args = append(args, "--header="+user+": "+id.TrustedProxy.User)
		if len(id.TrustedProxy.Groups) > 0 {
			args = append(args, "--header="+groups+": "+strings.Join(id.TrustedProxy.Groups, ","))
		}
		args = append(args, "--header-file="+secret+"="+path.Join(evalIdentityPath, evalIdentityFile))
	case id.TokenSecretRef != nil:
		args = append(args, "--token-file="+path.Join(evalIdentityPath, evalIdentityFile))
	}
	return args
}

// calibrationAlpha is the evaluation's alpha, defaulted.
func calibrationAlpha(spec v1alpha1.RouteEvaluationSpec) float64 {
	if spec.Calibration == nil || spec.Calibration.Alpha == nil {
		return v1alpha1.DefaultEvaluationCalibrationAlpha
	}
	return *spec.Calibration.Alpha
}

// proxyHeaderNames are the route's trusted-proxy header names, defaulted.
func proxyHeaderNames(route *v1alpha1.QueryRoute) (user, groups, secret string) {
	user, groups, secret = v1alpha1.DefaultProxyUserHeader, v1alpha1.DefaultProxyGroupsHeader, v1alpha1.DefaultProxySecretHeader
	if p := route.Spec.Auth.TrustedProxy; p != nil {
		user, groups, secret = cmp.Or(p.UserHeader, user), cmp.Or(p.GroupsHeader, groups), cmp.Or(p.SecretHeader, secret)
	}
	return user, groups, secret
}

// identitySecretRef is the Secret key a run's identity reads.
func identitySecretRef(identity v1alpha1.EvaluationIdentity) (field string, ref v1alpha1.SecretKeyRef) {
	if identity.TrustedProxy != nil {
		return "spec.identity.trustedProxy.secretRef", identity.TrustedProxy.SecretRef
	}
	if identity.TokenSecretRef != nil {
		return "spec.identity.tokenSecretRef", *identity.TokenSecretRef
	}
	return "", v1alpha1.SecretKeyRef{}
}

// buildEvaluationJob is one run: `ragroute eval-route` against the route's
// Service with the questions and the identity's Secret key mounted, bounded
// by the evaluation's timeout, reporting through its termination message.
// It is not retried: a failed run is reported and the next trigger runs
// again.
func buildEvaluationJob(run evaluationRun) *batchv1ac.JobApplyConfiguration {
	evaluation := run.evaluation
	labels := evaluationLabels(evaluation)
	podLabels := evaluationLabels(evaluation)
	podLabels[evalRunLabel] = run.job
	podLabels[evalRouteLabel] = run.route.Name
	_, ref := identitySecretRef(evaluation.Spec.Identity)
	container := corev1ac.Container().
		WithName("eval").
		WithImage(run.image).
		WithArgs(evaluationArgs(run)...).
		WithTerminationMessagePath(evalTerminationLog).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName("questions").WithMountPath(evalQuestionsPath).WithReadOnly(true),
			corev1ac.VolumeMount().WithName("identity").WithMountPath(evalIdentityPath).WithReadOnly(true)).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")})).
		WithSecurityContext(restrictedContainerSecurity())
	pod := corev1ac.PodTemplateSpec().
		WithLabels(podLabels).
		WithSpec(restrictedPodSpec().
			WithRestartPolicy(corev1.RestartPolicyNever).
			WithContainers(container).
			WithVolumes(
				corev1ac.Volume().WithName("questions").WithConfigMap(corev1ac.ConfigMapVolumeSource().
					WithName(evaluation.Spec.Questions.Name).
					WithItems(corev1ac.KeyToPath().WithKey(evaluation.Spec.Questions.Key).WithPath(evalQuestionsFile))),
				// Readable by the pod's group (fsGroup) only.
				corev1ac.Volume().WithName("identity").WithSecret(corev1ac.SecretVolumeSource().
					WithSecretName(ref.Name).WithDefaultMode(0o440).
					WithItems(corev1ac.KeyToPath().WithKey(ref.Key).WithPath(evalIdentityFile)))))
	return batchv1ac.Job(run.job, evaluation.Namespace).
		WithLabels(labels).
		WithOwnerReferences(evaluationOwner(evaluation)).
		WithSpec(batchv1ac.JobSpec().
			WithBackoffLimit(0).
			WithActiveDeadlineSeconds(int64((evaluationTimeout(evaluation) + evalDeadlineSlack).Seconds())).
			WithTTLSecondsAfterFinished(24 * 3600).
			WithTemplate(pod))
}

// evaluationResultsName is the ConfigMap of an evaluation's last misses.
func evaluationResultsName(evaluation *v1alpha1.RouteEvaluation) string {
	return truncateName(evaluation.Name, 48) + "-results"
}

// buildEvaluationResults holds the last finished run's misses as the run
// reported them (`{"questions","cut","results"}`, misses first, bounded by
// the termination message's 4 KiB), and which run they are from.
func buildEvaluationResults(evaluation *v1alpha1.RouteEvaluation, run *v1alpha1.EvaluationRun, misses []byte) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(evaluationResultsName(evaluation), evaluation.Namespace).
		WithLabels(evaluationLabels(evaluation)).
		WithAnnotations(map[string]string{"ragroute.io/evaluation-run": run.Job}).
		WithOwnerReferences(evaluationOwner(evaluation)).
		WithData(map[string]string{"misses.json": string(misses)})
}
