package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ControllerManagerOptions choose what a kube-controller-manager runs.
type ControllerManagerOptions struct {
	// Controllers are the names --controllers takes, e.g.
	// garbage-collector-controller, deployment-controller,
	// replicaset-controller, job-controller. Empty: the garbage collector
	// only.
	Controllers []string
	// APIQPS and APIBurst lift the controller manager's own client rate
	// limit (20/30 by default, far below what a few hundred Deployments
	// rolling at once need). Zero keeps the defaults.
	APIQPS, APIBurst int
	// ConcurrentSyncs is the worker count of the deployment, replicaset and
	// job controllers (5 by default). Zero keeps the default.
	ConcurrentSyncs int
	// RootCAFile is the CA the root-ca-certificate-publisher-controller
	// publishes to every namespace (kube-root-ca.crt), what pods trust
	// the API server with.
	RootCAFile string
}

// WorkloadControllers are those of a test bed with nodes: Deployments roll
// out through ReplicaSets, Jobs run to completion, owner references are
// honoured.
var WorkloadControllers = []string{
	"garbage-collector-controller", "deployment-controller", "replicaset-controller", "job-controller",
}

// NodeControllers are those of a test bed with a real kubelet besides
// WorkloadControllers: Services get endpoints for kube-proxy, and every
// namespace its default ServiceAccount and the API server's CA, which the
// kubelet mounts into pods with their tokens.
var NodeControllers = append(slices.Clone(WorkloadControllers),
	"endpointslice-controller", "serviceaccount-controller", "root-ca-certificate-publisher-controller", "ttl-after-finished-controller")

// StartGarbageCollector runs kube-controller-manager with only the garbage
// collector, so owner references are honoured as in a real cluster. envtest
// runs no controllers of its own.
func StartGarbageCollector(ctx context.Context, binDir, dir string, kubeconfig []byte) (*Process, error) {
	return StartControllerManager(ctx, binDir, dir, kubeconfig, ControllerManagerOptions{Controllers: []string{"garbagecollector"}})
}

// StartControllerManager runs kube-controller-manager with the controllers
// opts names, bound to loopback, and waits until it listens.
func StartControllerManager(ctx context.Context, binDir, dir string, kubeconfig []byte, opts ControllerManagerOptions) (*Process, error) {
	kubeconfigPath := filepath.Join(dir, "kube-controller-manager.kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	controllers := opts.Controllers
	if len(controllers) == 0 {
		controllers = []string{"garbagecollector"}
	}
	args := []string{
		"--kubeconfig=" + kubeconfigPath,
		"--authentication-kubeconfig=" + kubeconfigPath,
		"--authorization-kubeconfig=" + kubeconfigPath,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "kcm-certs"),
	}
	if opts.RootCAFile != "" {
		args = append(args, "--root-ca-file="+opts.RootCAFile)
	}
	if opts.APIQPS > 0 {
		args = append(args, "--kube-api-qps="+strconv.Itoa(opts.APIQPS))
	}
	if opts.APIBurst > 0 {
		args = append(args, "--kube-api-burst="+strconv.Itoa(opts.APIBurst))
	}
	if n := opts.ConcurrentSyncs; n > 0 {
		args = append(args,
			"--concurrent-deployment-syncs="+strconv.Itoa(n),
			"--concurrent-replicaset-syncs="+strconv.Itoa(n),
			"--concurrent-job-syncs="+strconv.Itoa(n))
	}
	return startListening(ctx, dir, filepath.Join(binDir, "kube-controller-manager"), port, args...)
}
