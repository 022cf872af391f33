//go:build tools

// Package testbed pins the kube-apiserver and kube-controller-manager that
// the envtest test bed runs. No binaries can be downloaded in this
// project's environments, so both are built from the Go module proxy and
// cached under bin/k8s (see hack/testbed.sh).
package testbed

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
