package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// markRolledOut plays the Deployment controller and the kubelet, which
// have no nodes here: once the route's process is ready, the Deployment's
// status says its replicas run the current template, so the route turns
// Ready (and the operator starts the sample evaluation's first run).
func (d *demo) markRolledOut(ctx context.Context, name string) error {
	deployment := &appsv1.Deployment{}
	if err := d.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, deployment); err != nil {
		return err
	}
	patch := client.MergeFrom(deployment.DeepCopy())
	replicas := int32(1)
	if deployment.Spec.Replicas != nil {
		replicas = *deployment.Spec.Replicas
	}
	deployment.Status = appsv1.DeploymentStatus{ObservedGeneration: deployment.Generation, Replicas: replicas,
		UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas}
	if err := d.admin.Status().Patch(ctx, deployment, patch); err != nil {
		return fmt.Errorf("record Deployment %s rolled out: %w", deployment.Name, err)
	}
	fmt.Printf("    Deployment %s marked %d/%d available (as the Deployment controller would)\n", deployment.Name, replicas, replicas)
	route := &v1alpha1.QueryRoute{}
	return waitFor(ctx, time.Minute, "QueryRoute "+name+" becomes Ready", func(ctx context.Context) (bool, error) {
		if err := d.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, route); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(route.Status.Conditions, v1alpha1.ConditionReady), nil
	})
}

// runEvaluation waits for the Job the operator starts for the sample
// RouteEvaluation, runs its container here against the route's local
// address, and then records the container's end in a pod, as the kubelet
// would: the operator reads the run's figures from its termination
// message. It prints the evaluation's status once the operator has.
func (d *demo) runEvaluation(ctx context.Context) error {
	if d.applied.evaluation == "" {
		fmt.Println("    config/samples holds no RouteEvaluation; nothing to run")
		return nil
	}
	job, err := d.waitJob(ctx, "the operator starts the evaluation's Job", "ragroute.io/routeevaluation", d.applied.evaluation)
	if err != nil {
		return err
	}
	cmd, err := d.prepare(ctx, job.Spec.Template, job.Name+"-local", "eval", "eval")
	if err != nil {
		return fmt.Errorf("evaluation job %s: %w", job.Name, err)
	}
	terminationLog := filepath.Join(d.cfg.work, "eval", "termination-log")
	args := make([]string, 0, len(cmd.Args))
	for _, a := range cmd.Args {
		// Only the route's address and the termination log's path differ
		// from the pod: the Service's name does not resolve here.
		switch {
		case strings.HasPrefix(a, "--route="):
			a = "--route=" + d.routeURL
		case strings.HasPrefix(a, "--termination-log="):
			a = "--termination-log=" + terminationLog
		}
		args = append(args, a)
	}
	fmt.Printf("    Job %s: ragroute %s\n", job.Name, strings.Join(args, " "))
	exitCode := int32(0)
	if err := d.runRagroute(ctx, args, cmd.Env); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return fmt.Errorf("ragroute eval-route: %w", err)
		}
		exitCode = int32(exit.ExitCode())
	}
	message, err := os.ReadFile(terminationLog)
	if err != nil && exitCode == 0 {
		return fmt.Errorf("ragroute eval-route wrote no termination message: %w", err)
	}
	if err := d.finishEvaluationPod(ctx, job, exitCode, string(message)); err != nil {
		return err
	}
	evaluation := &v1alpha1.RouteEvaluation{}
	err = waitFor(ctx, time.Minute, "the operator records the run in RouteEvaluation "+d.applied.evaluation, func(ctx context.Context) (bool, error) {
		if err := d.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: d.applied.evaluation}, evaluation); err != nil {
			return false, err
		}
		return evaluation.Status.LastRun != nil && evaluation.Status.LastRun.Job == job.Name && evaluation.Status.Active == nil, nil
	})
	if err != nil {
		return err
	}
	printEvaluation(evaluation)
	return nil
}

// finishEvaluationPod records the run's end as the Job controller and the
// kubelet would: a pod of the Job's template whose eval container ended
// with the exit code and termination message.
func (d *demo) finishEvaluationPod(ctx context.Context, job *batchv1.Job, exitCode int32, message string) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: job.Name + "-local", Labels: job.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	if err := d.admin.Create(ctx, pod); err != nil {
		return fmt.Errorf("create the run's pod: %w", err)
	}
	phase := corev1.PodSucceeded
	if exitCode != 0 {
		phase = corev1.PodFailed
	}
	pod.Status = corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "eval", Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Message: message,
			FinishedAt: metav1.Now()}}}}}
	if err := d.admin.Status().Update(ctx, pod); err != nil {
		return fmt.Errorf("record the run's pod finished: %w", err)
	}
	fmt.Printf("    pod %s marked finished, exit code %d, %d-byte termination message (as the kubelet would)\n", pod.Name, exitCode, len(message))
	if exitCode == 0 {
		return d.completeJob(ctx, job)
	}
	return nil
}

// printEvaluation shows what `kubectl get routeevaluation -o wide` and
// `kubectl describe` would: the conditions and the last run's figures.
func printEvaluation(e *v1alpha1.RouteEvaluation) {
	run := e.Status.LastRun
	fmt.Printf("    RouteEvaluation %s (route %s), run %s (%s): %s\n", e.Name, e.Spec.RouteRef.Name, run.Job, run.Trigger, run.Result)
	for _, c := range e.Status.Conditions {
		fmt.Printf("      %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	f := run.Figures
	if f == nil {
		return
	}
	figures := []struct {
		name  string
		value *float64
	}{{"recall@1", f.RecallAt1}, {"recall@5", f.RecallAt5}, {"recall@10", f.RecallAt10}, {"MRR", f.MRR}, {"nDCG@10", f.NDCGAt10},
		{"file recall@5", f.FileRecallAt5}, {"not found on unanswerable", f.NotFoundOnUnanswerable}, {"grounded ratio", f.GroundedRatio},
		{"citation precision", f.CitationPrecision}, {"citation recall", f.CitationRecall}}
	var shown []string
	for _, fig := range figures {
		if fig.value != nil {
			shown = append(shown, fmt.Sprintf("%s %.2f", fig.name, *fig.value))
		}
	}
	fmt.Printf("      %d questions (%d answerable, %d errors): %s; latency p50 %.0f ms, p95 %.0f ms\n",
		f.Questions, f.Answerable, f.Errors, strings.Join(shown, ", "), f.LatencyP50Ms, f.LatencyP95Ms)
	if e.Status.ResultsConfigMap != "" {
		fmt.Printf("      the misses: kubectl -n %s get configmap %s -o jsonpath='{.data.misses\\.json}'\n", namespace, e.Status.ResultsConfigMap)
	}
}
