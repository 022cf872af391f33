package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/testenv"
)

// suite is the real control plane the reconciler tests run against: envtest's
// kube-apiserver and etcd, a garbage collector, Milvus Lite, and the
// operator's manager. It starts once, on first use, so pure unit tests in
// this package run without it.
type suite struct {
	client client.Client
	// cached reads the manager's cache, as the reconcilers do.
	cached    client.Reader
	config    *rest.Config
	milvusURI string
}

var (
	suiteOnce  sync.Once
	suiteValue *suite
	suiteErr   error
	suiteStop  []func()
)

const testRouteImage = "ragroute/ragroute:test"

// testPullSecret is the image pull Secret the suite's operator names
// (--image-pull-secrets).
const testPullSecret = "regcred"

// testImagePrefix is the suite manager's --allowed-image-prefixes.
const testImagePrefix = "registry.test/ragroute"

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(suiteStop) - 1; i >= 0; i-- {
		suiteStop[i]()
	}
	os.Exit(code)
}

// startSuite returns the shared control plane, starting it on first call.
func startSuite(t *testing.T) *suite {
	t.Helper()
	testenv.Integration(t, "the test bed's kube-apiserver, etcd and Milvus Lite")
	suiteOnce.Do(func() { suiteValue, suiteErr = newSuite() })
	if suiteErr != nil {
		t.Fatalf("control plane: %v", suiteErr)
	}
	return suiteValue
}

func newSuite() (*suite, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is unset: run `make test`, which builds the test bed (hack/testbed.sh)")
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(zapcore.Level(zapLevel()))))
	ctx, cancel := context.WithCancel(context.Background())
	suiteStop = append(suiteStop, cancel)

	dir, err := os.MkdirTemp("", "ragroute-envtest-")
	if err != nil {
		return nil, err
	}
	suiteStop = append(suiteStop, func() { _ = os.RemoveAll(dir) })

	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start envtest: %w", err)
	}
	suiteStop = append(suiteStop, func() { _ = env.Stop() })

	admin, err := env.AddUser(envtest.User{Name: "gc", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("add gc user: %w", err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, err
	}
	gc, err := testenv.StartGarbageCollector(ctx, os.Getenv("KUBEBUILDER_ASSETS"), dir, kubeconfig)
	if err != nil {
		return nil, err
	}
	suiteStop = append(suiteStop, gc.Stop)

	milvus, err := testenv.StartMilvusLite(ctx, dir)
	if err != nil {
		return nil, err
	}
	suiteStop = append(suiteStop, milvus.Stop)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  CacheOptions(nil),
	})
	if err != nil {
		return nil, err
	}
	if err := Setup(ctx, mgr, Options{
		Clock:              clock.RealClock{},
		RouteImage:         testRouteImage,
		MilvusProbe:        knowledge.Probe,
		MilvusProbeTimeout: 3 * time.Second,
		MilvusRecheck:      time.Minute,
		MilvusRetry:        time.Second,
		ReadIndex:          knowledge.ReadIndexState,
		// More than one worker, as the manager runs them.
		MaxConcurrentReconciles: 2,
		// Counts follow route changes within a second, not ten: the
		// tests wait for them.
		RouteCountDelay:      time.Second,
		AllowedImagePrefixes: []string{testImagePrefix},
		ImagePullSecrets:     []string{testPullSecret},
	}); err != nil {
		return nil, err
	}
	managerDone := make(chan struct{})
	go func() {
		defer close(managerDone)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	// Stopped first (stops run in reverse): the manager ends before the
	// API server it talks to.
	suiteStop = append(suiteStop, func() { cancel(); <-managerDone })

	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	return &suite{client: c, cached: mgr.GetClient(), config: cfg, milvusURI: milvus.URI}, nil
}

func zapLevel() int8 {
	if os.Getenv("RAGROUTE_TEST_VERBOSE") != "" {
		return -1
	}
	return 1 // errors only: a passing run stays quiet
}

// namespace creates a fresh namespace for one test.
func (s *suite) namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rr-"}}
	if err := s.client.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// eventually polls check until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
