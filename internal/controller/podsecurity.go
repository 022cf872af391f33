package controller

import (
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// nonRootID runs every pod the operator builds: the image's nonroot user
// and group (distroless), which also owns the pod's volumes (fsGroup).
const nonRootID = 65532

// restrictedPodSpec is the start of every pod the operator builds (route,
// ingestion and evaluation pods alike): it meets the "restricted" Pod
// Security Standard, so the pods run in namespaces that enforce it, and it
// mounts no service account token and injects no Service environment,
// since no pod reads the Kubernetes API.
func restrictedPodSpec() *corev1ac.PodSpecApplyConfiguration {
	return corev1ac.PodSpec().
		WithAutomountServiceAccountToken(false).
		WithEnableServiceLinks(false).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(nonRootID).
			WithRunAsGroup(nonRootID).
			WithFSGroup(nonRootID).
			WithSeccompProfile(runtimeDefaultSeccomp()))
}

// restrictedContainerSecurity is the "restricted" Pod Security Standard for
// one container: no privilege escalation, no capabilities, a read-only root
// filesystem (each pod writes only to its own emptyDir /tmp).
func restrictedContainerSecurity() *corev1ac.SecurityContextApplyConfiguration {
	return corev1ac.SecurityContext().
		WithAllowPrivilegeEscalation(false).
		WithReadOnlyRootFilesystem(true).
		WithRunAsNonRoot(true).
		WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")).
		WithSeccompProfile(runtimeDefaultSeccomp())
}

func runtimeDefaultSeccomp() *corev1ac.SeccompProfileApplyConfiguration {
	return corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)
}
