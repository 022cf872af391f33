package controller

import (
	"strings"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// Private registries: the operator's --image-pull-secrets name Secrets
// that route and ingestion pods pull their image with. A pull Secret is
// namespaced, so one of each name must exist in every namespace with
// routes or stores; the chart passes its imagePullSecrets on.

// ParseImagePullSecrets reads the flag's comma-separated Secret names.
func ParseImagePullSecrets(flag string) []string {
	var names []string
	for _, name := range strings.Split(flag, ",") {
		if name = strings.TrimSpace(name); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// withPullSecrets adds the pull Secrets to a pod spec; a pod spec built
// without them is returned as it is.
func withPullSecrets(spec *corev1ac.PodSpecApplyConfiguration, names []string) {
	for _, name := range names {
		spec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(name))
	}
}
