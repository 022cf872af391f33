package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ragroute/ragroute/internal/testenv/kubebed"
)

// envForeignConfigMaps is how many 1 MiB ConfigMaps of a namespace user
// TestOperatorPeakRSSWithForeignConfigMaps creates; unset: the test skips.
const envForeignConfigMaps = "RAGROUTE_FOREIGN_CONFIGMAPS"

// TestOperatorPeakRSSWithForeignConfigMaps measures the manager's peak
// RSS (VmHWM) when a namespace holds N ConfigMaps of 1 MiB that are not
// the operator's (issue 40, finding 4: 250 of them crash-looped an
// operator that cached every ConfigMap, at the chart's 256 MiB limit).
// It starts the manager after they exist, as a restarted operator meets
// them, and reads its peak once that has held for 20 s.
// A benchmark, not part of `make test`:
//
//	RAGROUTE_FOREIGN_CONFIGMAPS=250 KUBEBUILDER_ASSETS="$(hack/testbed.sh)" \
//	  go test ./test/scale -run TestOperatorPeakRSSWithForeignConfigMaps -count=1 -v
//
// With RAGROUTE_BIN it measures that build (e.g. one of the code before).
func TestOperatorPeakRSSWithForeignConfigMaps(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(envForeignConfigMaps))
	if err != nil || n < 1 {
		t.Skipf("%s is unset (or not a count): a benchmark run on demand", envForeignConfigMaps)
	}
	if os.Getenv(kubebed.EnvAssets) == "" {
		t.Skipf("%s is unset: run hack/testbed.sh", kubebed.EnvAssets)
	}
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	built := buildManager(dir)

	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := kubebed.BindClusterRole(ctx, admin, filepath.Join("..", "..", "config", "rbac", "role.yaml"), operatorUser); err != nil {
		t.Fatal(err)
	}
	user, err := env.AddUser(envtest.User{Name: operatorUser}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigPath := filepath.Join(dir, "operator.kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}

	const ns = "tenant"
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	blob := strings.Repeat("x", 1<<20-256)
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("blob-%04d", i)},
			Data: map[string]string{"blob": blob}}
		if err := admin.Create(ctx, cm); err != nil {
			t.Fatalf("create ConfigMap %d: %v", i, err)
		}
	}

	build := <-built
	if build.err != nil {
		t.Fatal(build.err)
	}
	m, err := startManager(ctx, build.bin, kubeconfigPath, dir, "manager")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	// Ready answers before the caches fill: wait until the peak has held
	// for a while (the lists done, the watches open).
	var peak int64
	for held, deadline := time.Now(), time.Now().Add(5*time.Minute); time.Since(held) < 20*time.Second; {
		now, err := peakRSS(m.Pid())
		if err != nil {
			t.Fatal(err)
		}
		if now != peak {
			peak, held = now, time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the manager's peak RSS still grows after 5 minutes (%s)", mib(peak))
		}
		time.Sleep(time.Second)
	}
	t.Logf("manager peak RSS (VmHWM) with %d foreign ConfigMaps of 1 MiB: %s", n, mib(peak))
}
