package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// StartGarbageCollector runs kube-controller-manager with only the garbage
// collector, so owner references are honoured as in a real cluster. envtest
// runs no controllers of its own.
func StartGarbageCollector(ctx context.Context, binDir, dir string, kubeconfig []byte) (*Process, error) {
	kubeconfigPath := filepath.Join(dir, "kube-controller-manager.kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p, err := start(dir, filepath.Join(binDir, "kube-controller-manager"),
		"--kubeconfig="+kubeconfigPath,
		"--authentication-kubeconfig="+kubeconfigPath,
		"--authorization-kubeconfig="+kubeconfigPath,
		"--controllers=garbagecollector",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "kcm-certs"),
	)
	if err != nil {
		return nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := p.waitForPort(waitCtx, fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}
