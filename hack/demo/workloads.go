package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/ragroute/ragroute/hack/demo/localrun"
	"github.com/ragroute/ragroute/internal/testenv"
)

// runIngestion waits for the Job the operator created for the store, runs
// its container here to completion, and then records the completion in
// the Job's status, as the Job controller would, so the operator sees it.
func (d *demo) runIngestion(ctx context.Context) error {
	job, err := d.waitJob(ctx, "the operator creates the ingestion Job", "ragroute.io/knowledgestore", d.applied.store)
	if err != nil {
		return err
	}
	cmd, err := d.prepare(ctx, job.Spec.Template.Spec, "ingest", "ingest")
	if err != nil {
		return fmt.Errorf("ingest job %s: %w", job.Name, err)
	}
	fmt.Printf("    Job %s: ragroute %s\n", job.Name, strings.Join(cmd.Args, " "))
	if err := d.runRagroute(ctx, cmd.Args, cmd.Env); err != nil {
		return fmt.Errorf("ragroute ingest: %w", err)
	}
	if err := d.completeJob(ctx, job); err != nil {
		return err
	}
	store := &v1alpha1.KnowledgeStore{}
	err = waitFor(ctx, time.Minute, "KnowledgeStore "+d.applied.store+" becomes Ready", func(ctx context.Context) (bool, error) {
		if err := d.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: d.applied.store}, store); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(store.Status.Conditions, v1alpha1.ConditionReady), nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("    KnowledgeStore %s Ready: %d rows, index generation %d\n", store.Name, store.Status.Rows, store.Status.IndexGeneration)
	return nil
}

// waitJob waits for the operator's Job labelled label=value.
func (d *demo) waitJob(ctx context.Context, what, label, value string) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	err := waitFor(ctx, time.Minute, what, func(ctx context.Context) (bool, error) {
		jobs := &batchv1.JobList{}
		if err := d.admin.List(ctx, jobs, client.InNamespace(namespace), client.MatchingLabels{label: value}); err != nil {
			return false, err
		}
		if len(jobs.Items) == 0 {
			return false, nil
		}
		*job = jobs.Items[0]
		return true, nil
	})
	return job, err
}

// runRagroute runs bin/ragroute with a container's args and environment
// to its end, its output indented under the step.
func (d *demo) runRagroute(ctx context.Context, args, env []string) error {
	run := exec.CommandContext(ctx, d.cfg.ragroute, args...)
	run.Env = append(os.Environ(), env...)
	out, err := run.StdoutPipe()
	if err != nil {
		return err
	}
	run.Stderr = run.Stdout
	if err := run.Start(); err != nil {
		return err
	}
	indent(out)
	return run.Wait()
}

// completeJob plays the Job controller, which has no nodes to run on here.
func (d *demo) completeJob(ctx context.Context, job *batchv1.Job) error {
	patch := client.MergeFrom(job.DeepCopy())
	now := metav1.Now()
	job.Status.StartTime = &now
	job.Status.CompletionTime = &now
	job.Status.Succeeded = 1
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	if err := d.admin.Status().Patch(ctx, job, patch); err != nil {
		return fmt.Errorf("record Job %s complete: %w", job.Name, err)
	}
	fmt.Printf("    Job %s marked complete (as the Job controller would)\n", job.Name)
	return nil
}

// runRoute waits for the route's Deployment and runs its container here on
// a free loopback port, until the route says it is ready.
func (d *demo) runRoute(ctx context.Context) error {
	deployment := &appsv1.Deployment{}
	err := waitFor(ctx, time.Minute, "the operator renders Deployment "+d.applied.route, func(ctx context.Context) (bool, error) {
		err := d.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: d.applied.route}, deployment)
		return err == nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		return err
	}
	cmd, err := d.prepare(ctx, deployment.Spec.Template.Spec, "serve", "route")
	if err != nil {
		return fmt.Errorf("route deployment %s: %w", deployment.Name, err)
	}
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	probePort, err := testenv.FreePort()
	if err != nil {
		return err
	}
	// Only the listen addresses differ from the pod: 8080 and 8081 may be
	// taken here.
	args := append(cmd.Args, fmt.Sprintf("--listen=127.0.0.1:%d", port), fmt.Sprintf("--metrics-listen=127.0.0.1:%d", probePort))
	fmt.Printf("    Deployment %s: ragroute %s\n", deployment.Name, strings.Join(args, " "))
	p, err := d.startProcess("route", d.cfg.ragroute, args, cmd.Env)
	if err != nil {
		return err
	}
	d.routeURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	d.routeCmd = cmd
	if err := waitHTTP(ctx, p, fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort), time.Minute); err != nil {
		return err
	}
	fmt.Printf("    route ready at %s; log %s\n", d.routeURL, p.LogPath)
	return d.markRolledOut(ctx)
}

// prepare materialises a pod's volumes under the work folder.
func (d *demo) prepare(ctx context.Context, spec corev1.PodSpec, container, dir string) (localrun.Command, error) {
	cmd, err := localrun.Prepare(ctx, objects{d.admin}, namespace, spec, container, filepath.Join(d.cfg.work, dir))
	if err != nil {
		return cmd, err
	}
	if len(cmd.Entrypoint) > 0 {
		return cmd, errors.New("the container overrides the image's entrypoint; the demo runs bin/ragroute")
	}
	return cmd, nil
}

// objects reads ConfigMaps and Secrets for localrun.
type objects struct{ c client.Client }

func (o objects) ConfigMap(ctx context.Context, ns, name string) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	if err := o.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		return nil, err
	}
	return cm.Data, nil
}

func (o objects) Secret(ctx context.Context, ns, name string) (map[string][]byte, error) {
	s := &corev1.Secret{}
	if err := o.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		return nil, err
	}
	return s.Data, nil
}

// indent copies a child's output, indented under the step.
func indent(r io.Reader) {
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		fmt.Println("    │ " + scanner.Text())
	}
}
