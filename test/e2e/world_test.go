package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/testenv/kubebed"
	"github.com/ragroute/ragroute/internal/testenv/node"
)

// Where the images and tools come from (the Makefile sets them).
const (
	envImage        = "RAGROUTE_IMAGE"         // the image's name, e.g. ragroute/ragroute:0.1.0
	envImageTarball = "RAGROUTE_IMAGE_TAR"     // make image's tarball of it
	envKubectlImage = "RAGROUTE_KUBECTL_IMAGE" // make image-kubectl's tarball (helm test), for -e2e.full
	envHelm         = "RAGROUTE_HELM"
	// envModels names hack/models.sh: when set, the pods use the real
	// local models (all-MiniLM-L6-v2, Qwen2.5-Coder-1.5B-Instruct, the
	// ms-marco cross-encoder) on the host instead of the scripted server,
	// and the samples keep their reranker and floors (make e2e).
	envModels = "RAGROUTE_MODELS"
)

// world is a bed with a real node, the servers the pods use on the host,
// and clients for both.
type world struct {
	bed        *kubebed.Bed
	dir        string
	host       string // the host's address on the node's bridge
	image      string
	kubeconfig string
	c          client.Client
	cs         kubernetes.Interface
	milvus     *testenv.MilvusLite
	// The models' endpoints on the host, and the scripted server when
	// they are it (nil with the real local models).
	chatURL, embedURL, rerankURL string
	scripted                     *testenv.ModelServer
	// evaluation is the sample RouteEvaluation, held back by applySamples
	// until evaluate applies it.
	evaluation *unstructured.Unstructured
}

func requireEnv(t *testing.T, name, how string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is unset: %s", name, how)
	}
	return v
}

func startWorld(ctx context.Context, t *testing.T, helmTest bool) *world {
	t.Helper()
	testenv.Integration(t, "a real node (containerd, kubelet; root), the chart's image and Helm")
	ctrllog.SetLogger(logr.Discard())
	w := &world{dir: t.TempDir(), image: requireEnv(t, envImage, "run `make test` or `make e2e`, which build the image (make image)")}
	images := []string{requireEnv(t, envImageTarball, "run `make test` or `make e2e`, which build it (make image)")}
	if helmTest {
		images = append(images, requireEnv(t, envKubectlImage, "run `make e2e`, which builds it (make image-kubectl)"))
	}
	bed, err := kubebed.Start(ctx, kubebed.Options{Dir: w.dir, RealNode: &kubebed.RealNodeOptions{
		BinDir: requireEnv(t, node.EnvBinDir, "run `make test`, which builds the node (hack/node.sh)"), Images: images,
	}})
	if err != nil {
		t.Fatalf("start a bed with a real node: %v", err)
	}
	t.Cleanup(bed.Stop)
	w.bed, w.host = bed, bed.Node.HostIP().String()
	w.kubeconfig = filepath.Join(w.dir, "admin.kubeconfig")
	config, err := bed.WriteKubeconfig(w.kubeconfig, "e2e-admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if w.c, err = client.New(config, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	w.cs = kubernetes.NewForConfigOrDie(config)
	if w.milvus, err = testenv.StartMilvusLiteOn(ctx, w.dir, w.host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.milvus.Stop)
	if models := os.Getenv(envModels); models != "" {
		w.startLocalModels(ctx, t, models)
		return w
	}
	if w.scripted, err = testenv.StartModelServerOn(net.JoinHostPort(w.host, "0"), sampleDimensions); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.scripted.Close)
	w.chatURL, w.embedURL = w.scripted.BaseURL(), w.scripted.BaseURL()
	return w
}

// startLocalModels runs hack/models.sh's embedder, Qwen chat model and
// cross-encoder on the host's bridge address (make e2e fetched them).
func (w *world) startLocalModels(ctx context.Context, t *testing.T, modelsScript string) {
	t.Helper()
	urls := map[string]*string{"embed": &w.embedURL, "qwen": &w.chatURL, "rerank": &w.rerankURL}
	for _, which := range []string{"embed", "qwen", "rerank"} {
		port, err := testenv.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		p, err := testenv.StartProcess(testenv.ProcessSpec{Command: modelsScript, Args: []string{"run", which, strconv.Itoa(port)},
			Env: []string{"MODEL_HOST=" + w.host}, LogPath: filepath.Join(w.dir, which+".log")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		base := "http://" + net.JoinHostPort(w.host, strconv.Itoa(port))
		waitCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		waitFor(waitCtx, t, "the local "+which+" server", func() (bool, string) {
			if p.Exited() {
				t.Fatalf("the local %s server exited; see %s", which, p.LogPath)
			}
			resp, err := http.Get(base + "/health")
			if err != nil {
				return false, err.Error()
			}
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusOK, resp.Status
		})
		cancel()
		if which != "rerank" {
			base += "/v1"
		}
		*urls[which] = base
	}
}

// sampleDimensions is the sample store's embedding size.
const sampleDimensions = 384

// helm runs Helm against the bed, bounded by ctx.
func (w *world) helm(ctx context.Context, t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, requireEnv(t, envHelm, "run `make test`, which installs Helm under bin/"), args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "KUBECONFIG="+w.kubeconfig,
		"HELM_CACHE_HOME="+filepath.Join(w.dir, "helm", "cache"), "HELM_CONFIG_HOME="+filepath.Join(w.dir, "helm", "config"),
		"HELM_DATA_HOME="+filepath.Join(w.dir, "helm", "data"))
	err := cmd.Run()
	return out.String(), err
}

// samples renders config/samples as kubectl apply -k would.
func samples(ctx context.Context, t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	kubectl := filepath.Join(requireEnv(t, kubebed.EnvAssets, "run `make test`, which builds the test bed"), "kubectl")
	out, err := exec.CommandContext(ctx, kubectl, "kustomize", filepath.Join("..", "..", "config", "samples")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/samples: %v", err)
	}
	var objs []*unstructured.Unstructured
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("decode config/samples: %v", err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// set sets a field of a sample, failing on a type mismatch.
func set(t *testing.T, obj *unstructured.Unstructured, value any, fields ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(obj.Object, value, fields...); err != nil {
		t.Fatalf("%s %s: set %s: %v", obj.GetKind(), obj.GetName(), strings.Join(fields, "."), err)
	}
}

// waitFor polls check every 250 ms until it is done or ctx ends.
func waitFor(ctx context.Context, t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	last := ""
	for {
		done, state := check()
		if done {
			return
		}
		last = state
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v; last seen: %s", what, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitReady waits for obj's Ready condition to be True.
func (w *world) waitReady(ctx context.Context, t *testing.T, obj client.Object, conditions func() []metav1.Condition) {
	t.Helper()
	waitFor(ctx, t, fmt.Sprintf("%T %s Ready", obj, obj.GetName()), func() (bool, string) {
		if err := w.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		ready := meta.FindStatusCondition(conditions(), v1alpha1.ConditionReady)
		if ready == nil {
			return false, "no Ready condition"
		}
		return ready.Status == metav1.ConditionTrue, ready.Reason + ": " + ready.Message
	})
}

// rolledOut reports whether d's latest spec is what all its ready pods run.
func rolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
}

// podsOf lists the pods selector picks in ns.
func (w *world) podsOf(ctx context.Context, ns, selector string) []corev1.Pod {
	pods, err := w.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil
	}
	return pods.Items
}
