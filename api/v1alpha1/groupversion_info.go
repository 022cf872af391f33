// Package v1alpha1 holds the ragroute.io/v1alpha1 API: PlatformPrompt,
// KnowledgeStore, QueryRoute and RouteEvaluation. The CRD schemas generated
// from these types (OpenAPI + CEL) are the contract with platform admins:
// bad YAML is refused by the API server, not discovered later by a
// reconciler.
// +kubebuilder:object:generate=true
// +groupName=ragroute.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "ragroute.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion} //nolint:staticcheck // the kubebuilder layout registers types through it

	// AddToScheme adds the kinds of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
