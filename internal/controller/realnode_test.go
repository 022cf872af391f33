package controller

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/testenv/kubebed"
	"github.com/ragroute/ragroute/internal/testenv/node"
)

// probeImage is the node's probe (hack/node/probe): it prints its ids and
// the files it is given, and fails on one it cannot read.
const probeImage = "ragroute.local/probe:bed"

// The ingest Job's pod, as the builder makes it, reads its git source's
// credentials on a real kubelet: the Secret's files are root's, the
// process is uid 65532, so it reads them only through the pod's fsGroup.
func TestIngestPodReadsItsGitCredentialsOnARealNode(t *testing.T) {
	bed := startRealNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(bed.Admin)
	ns := "default"
	store := newStore(ns, "docs", "http://milvus:19530")
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Sources: []v1alpha1.IngestionSource{{
		Name: "handbook", Git: &v1alpha1.GitSource{URL: "https://git.acme.example/handbook.git", SecretRef: &v1alpha1.LocalObjectRef{Name: "git-creds"}},
	}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "git-creds", Namespace: ns},
		StringData: map[string]string{"username": "ingest-bot", "password": "s3cret"}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ingestConfigMapName(store), Namespace: ns}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, config, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The builder's Job, its container running the probe on the paths
	// the ingester reads its credentials from.
	job := buildIngestJob(store, probeImage, "0123456789abcdef", nil)
	job.OwnerReferences = nil // the bed has no KnowledgeStore to own it
	container := &job.Spec.Template.Spec.Containers[0]
	credentials := path.Join(secretsMountPath, "handbook")
	container.Command, container.Args = nil, nil
	container.WithImagePullPolicy(corev1.PullNever).WithCommand("/probe").
		WithArgs(path.Join(credentials, "username"), path.Join(credentials, "password"))
	container.Env = []corev1ac.EnvVarApplyConfiguration{}
	if _, err := cs.BatchV1().Jobs(ns).Apply(ctx, job, metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
		t.Fatal(err)
	}
	pod := waitPodDone(ctx, t, cs, ns, "job-name="+*job.Name)
	log := bed.Node.PodLogs(pod.Namespace, pod.Name)
	if pod.Status.Phase != corev1.PodSucceeded || !strings.Contains(log, `username: "ingest-bot"`) {
		t.Fatalf("the ingest pod ended %s; it printed:\n%s", pod.Status.Phase, log)
	}
	if !strings.HasPrefix(log, "uid 65532 gid 65532") {
		t.Errorf("the ingest pod did not run as 65532:65532:\n%s", log)
	}
}

// startRealNode starts a bed whose node is a real kubelet with the probe
// image imported (hack/node.sh builds them; make test runs it).
func startRealNode(t *testing.T) *kubebed.Bed {
	t.Helper()
	testenv.Integration(t, "a real node (containerd, kubelet; root)")
	binDir := os.Getenv(node.EnvBinDir)
	if binDir == "" {
		t.Fatal(node.EnvBinDir + " is unset: run `make test`, which builds the node (hack/node.sh)")
	}
	// Long enough to wait for another package's node (one runs at a time)
	// and then start this one.
	ctx, cancel := context.WithTimeout(context.Background(), 13*time.Minute)
	defer cancel()
	bed, err := kubebed.Start(ctx, kubebed.Options{Dir: t.TempDir(), RealNode: &kubebed.RealNodeOptions{
		BinDir: binDir, Images: []string{filepath.Join(binDir, "probe.tar")},
	}})
	if err != nil {
		t.Fatalf("start a bed with a real node: %v", err)
	}
	t.Cleanup(bed.Stop)
	return bed
}

// waitPodDone waits for the pod selector names to succeed or fail.
func waitPodDone(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, selector string) *corev1.Pod {
	t.Helper()
	for {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err == nil && len(pods.Items) > 0 {
			if p := pods.Items[0]; p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				return &p
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no pod of %s ended: %v (%+v)", selector, ctx.Err(), pods)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
