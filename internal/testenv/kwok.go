package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// KwokStagesFile is the file hack/testbed.sh writes next to kwok in the
// test bed: kwok's own "fast" stages for its pinned version (a node turns
// Ready at once; a scheduled pod turns Running and Ready at once; a Job's
// pod then Succeeds; a deleted pod goes).
const KwokStagesFile = "kwok-stages.yaml"

// StartKwok runs kwok (installed by hack/testbed.sh into binDir) against
// the API server of kubeconfig. It manages every Node, so each Node a test
// creates becomes a simulated node: pods the scheduler binds to it turn
// Running and Ready without a container runtime, and Job pods complete.
// kwok has no port to wait on: wait for a Node to turn Ready instead.
//
// kwok watches from resourceVersion "0"; the API server must run with the
// WatchList feature off when its etcd cannot send progress notifications
// (Debian's etcd 3.4), or it turns those watches into watch-list streams it
// then refuses, and kwok sees pods only at its backed-off relists (kubebed
// does this).
func StartKwok(binDir, dir string, kubeconfig []byte) (*Process, error) {
	kubeconfigPath := filepath.Join(dir, "kwok.kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	stages := filepath.Join(binDir, KwokStagesFile)
	if _, err := os.Stat(stages); err != nil {
		return nil, fmt.Errorf("kwok stages: %w (run hack/testbed.sh)", err)
	}
	return start(dir, filepath.Join(binDir, "kwok"),
		"--kubeconfig="+kubeconfigPath,
		"--config="+stages,
		"--manage-all-nodes=true",
		// Pod IPs are only written into pod status; a /16 fits thousands
		// of pods (the default /24 holds 254).
		"--cidr=10.0.0.0/16",
		"--node-ip=10.0.0.1",
	)
}
