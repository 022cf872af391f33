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
	"runtime"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/hack/demo/localrun"
	"github.com/ragroute/ragroute/internal/testenv"
)

// runIngestion waits for the Job the operator created for the store, runs
// its container here to completion, and then records the completion in
// the Job's status, as the Job controller would, so the operator sees it.
func (d *demo) runIngestion(ctx context.Context) error {
	return d.ingest(ctx, d.applied.store)
}

// ingest runs the ingestion Job the operator creates for storeName here,
// and waits for the store Ready.
func (d *demo) ingest(ctx context.Context, storeName string) error {
	job, err := d.waitJob(ctx, "the operator creates the ingestion Job", "ragroute.io/knowledgestore", storeName)
	if err != nil {
		return err
	}
	cmd, err := d.prepare(ctx, job.Spec.Template, job.Name+"-local", "ingest", "ingest")
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
	err = waitFor(ctx, time.Minute, "KnowledgeStore "+storeName+" becomes Ready", func(ctx context.Context) (bool, error) {
		if err := d.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: storeName}, store); err != nil {
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

// runRoute runs the sample route's Deployment here (runDeployment).
func (d *demo) runRoute(ctx context.Context) error {
	url, cmd, err := d.runDeployment(ctx, d.applied.route)
	if err != nil {
		return err
	}
	d.routeURL, d.routeCmd = url, cmd
	return nil
}

// runDeployment waits for the Deployment the operator renders for route,
// runs its container here on a free loopback port until the route says it
// is ready, and records it rolled out; it returns the route's address and
// its container as run here.
func (d *demo) runDeployment(ctx context.Context, route string) (string, localrun.Command, error) {
	deployment := &appsv1.Deployment{}
	err := waitFor(ctx, time.Minute, "the operator renders Deployment "+route, func(ctx context.Context) (bool, error) {
		err := d.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: route}, deployment)
		return err == nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		return "", localrun.Command{}, err
	}
	cmd, err := d.prepare(ctx, deployment.Spec.Template, deployment.Name+"-local", "serve", filepath.Join("routes", route))
	if err != nil {
		return "", cmd, fmt.Errorf("route deployment %s: %w", deployment.Name, err)
	}
	port, err := testenv.FreePort()
	if err != nil {
		return "", cmd, err
	}
	probePort, err := testenv.FreePort()
	if err != nil {
		return "", cmd, err
	}
	// Only the listen addresses differ from the pod (8080 and 8081 may be
	// taken here), and the shutdown delay: no Service has to stop sending
	// this process requests before it drains.
	args := append(cmd.Args, fmt.Sprintf("--listen=127.0.0.1:%d", port), fmt.Sprintf("--metrics-listen=127.0.0.1:%d", probePort),
		"--shutdown-delay=0s")
	fmt.Printf("    Deployment %s: ragroute %s\n", deployment.Name, strings.Join(args, " "))
	p, err := d.startProcess("route-"+route, d.cfg.ragroute, args, cmd.Env)
	if err != nil {
		return "", cmd, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitHTTP(ctx, p, fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort), time.Minute); err != nil {
		return "", cmd, err
	}
	fmt.Printf("    route %s ready at %s; log %s\n", route, url, p.LogPath)
	return url, cmd, d.markRolledOut(ctx, route)
}

// prepare materialises the volumes of the pod a controller would create
// from template, named name, under the work folder; the pod runs on this
// machine, whose cores and memory are its node's allocatable.
func (d *demo) prepare(ctx context.Context, template corev1.PodTemplateSpec, name, container, dir string) (localrun.Command, error) {
	meta := *template.ObjectMeta.DeepCopy()
	meta.Name, meta.Namespace, meta.UID = name, namespace, uuid.NewUUID()
	pod := localrun.Pod{Meta: meta, Spec: template.Spec, NodeName: "localhost", IP: "127.0.0.1", Allocatable: localAllocatable()}
	cmd, err := localrun.Prepare(ctx, objects{d.admin}, pod, container, filepath.Join(d.cfg.work, dir))
	if err != nil {
		return cmd, err
	}
	if len(cmd.Entrypoint) > 0 {
		return cmd, errors.New("the container overrides the image's entrypoint; the demo runs bin/ragroute")
	}
	return cmd, nil
}

// localAllocatable is this machine as a node: its cores and its memory.
func localAllocatable() corev1.ResourceList {
	list := corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI)}
	var info syscall.Sysinfo_t
	if syscall.Sysinfo(&info) == nil {
		list[corev1.ResourceMemory] = *resource.NewQuantity(int64(info.Totalram)*int64(info.Unit), resource.BinarySI)
	}
	return list
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
