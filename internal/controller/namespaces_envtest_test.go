package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/testenv"
)

// TestWatchNamespacesLeavesOtherNamespacesAlone runs a manager built as
// --watch-namespaces=<nsA> builds it, on a control plane of its own (the
// suite's manager watches every namespace and would reconcile nsB). A
// QueryRoute in nsA gets a status; one in nsB, created first, gets none,
// and the cache holds only nsA's opted-in Secrets.
func TestWatchNamespacesLeavesOtherNamespacesAlone(t *testing.T) {
	testenv.Integration(t, "the test bed's kube-apiserver and etcd")
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is unset: run `make test`, which builds the test bed (hack/testbed.sh)")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const nsA, nsB = "watched", "unwatched"
	for _, ns := range []string{nsA, nsB} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"},
			Data: map[string][]byte{"k": []byte("v")}}
		for _, obj := range []client.Object{newSecret(ns, "llm", "apiKey", "sk-llm", llmHost), plain} {
			if err := c.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	// nsB's route first: by the time nsA's is reconciled, a manager
	// watching nsB would have had its turn at nsB's.
	if err := c.Create(ctx, newRoute(nsB, "support", "docs", "default")); err != nil {
		t.Fatal(err)
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  CacheOptions([]string{nsA}),
		// The shared suite's manager registered the same controller names
		// in this process; this second manager is deliberate.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	if err := Setup(mctx, mgr, Options{Clock: clock.RealClock{}, RouteImage: testRouteImage, WatchNamespaces: []string{nsA},
		MilvusProbeTimeout: time.Second, MilvusRecheck: time.Minute, MilvusRetry: time.Second}); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(mctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done }) // before env.Stop: cleanups run last first

	if err := c.Create(ctx, newRoute(nsA, "support", "docs", "default")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the route in the watched namespace gets a status", func() error {
		route := &v1alpha1.QueryRoute{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: nsA, Name: "support"}, route); err != nil {
			return err
		}
		if len(route.Status.Conditions) == 0 {
			return errors.New("no conditions yet")
		}
		return nil
	})

	// A bounded wait: nothing may write nsB's status in the meantime.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		route := &v1alpha1.QueryRoute{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: nsB, Name: "support"}, route); err != nil {
			t.Fatal(err)
		}
		if len(route.Status.Conditions) > 0 || route.Status.ObservedGeneration != 0 {
			t.Fatalf("the route in the unwatched namespace was reconciled: %+v", route.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The cache holds nsA's opted-in Secret only: the label selector still
	// applies in each watched namespace, and nsB is not cached at all.
	var secrets corev1.SecretList
	if err := mgr.GetCache().List(ctx, &secrets); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range secrets.Items {
		got = append(got, s.Namespace+"/"+s.Name)
	}
	if want := []string{nsA + "/llm"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cached Secrets %v, want %v", got, want)
	}
}
