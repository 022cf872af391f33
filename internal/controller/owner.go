package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// controllerOwner makes obj, a ragroute object of kind, the controlling
// owner of what it is applied to, so deleting obj deletes that too.
func controllerOwner(kind string, obj metav1.Object) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().WithAPIVersion(v1alpha1.GroupVersion.String()).WithKind(kind).
		WithName(obj.GetName()).WithUID(obj.GetUID()).WithController(true).WithBlockOwnerDeletion(true)
}
