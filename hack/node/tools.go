//go:build tools

// Package node pins the kubelet and kube-proxy of the test bed's real
// node (see hack/node.sh). They are v1.35, not the bed's v1.37: v1.35 is
// the last kubelet that supports containerd 1.x (Debian's is 1.6) and it
// still runs on a cgroup v1 hierarchy when told to; it is within the
// supported skew of a v1.37 API server (kubelet and kube-proxy may be
// three minor versions older).
package node

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
