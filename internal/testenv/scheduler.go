package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// StartScheduler runs kube-scheduler (built by hack/testbed.sh into binDir)
// bound to loopback, with its client rate limit lifted so a few hundred
// pods bind in seconds, and waits until it listens. With kwok's simulated
// nodes it gives pods the node a kubelet would run them on.
func StartScheduler(ctx context.Context, binDir, dir string, kubeconfig []byte) (*Process, error) {
	kubeconfigPath := filepath.Join(dir, "kube-scheduler.kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	configPath := filepath.Join(dir, "kube-scheduler.yaml")
	config := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 1000
  burst: 2000
leaderElection:
  leaderElect: false
`, kubeconfigPath)
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return nil, fmt.Errorf("write scheduler config: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return startListening(ctx, dir, filepath.Join(binDir, "kube-scheduler"), port,
		"--config="+configPath,
		"--authentication-kubeconfig="+kubeconfigPath,
		"--authorization-kubeconfig="+kubeconfigPath,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "scheduler-certs"),
	)
}
