//go:build tools

// Package testbed pins the kube-apiserver, kube-controller-manager and
// kube-scheduler that the envtest test bed runs. No binaries can be
// downloaded in this project's environments, so they are built from the Go
// module proxy and cached under bin/k8s (see hack/testbed.sh). kwok is not
// pinned here: it is its own module, installed by hack/testbed.sh.
package testbed

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
