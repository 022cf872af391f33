package localrun

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod is the pod a controller would create from a template, as it runs
// here: what the downward API reads in a container's environment.
type Pod struct {
	// Meta is the pod's name, namespace, uid, labels and annotations (the
	// template's, as the controller copies them).
	Meta metav1.ObjectMeta
	Spec corev1.PodSpec
	// NodeName and IP say where it runs: this machine (its pod and host
	// IP are one here).
	NodeName, IP string
	// Allocatable is the node's: what a resourceFieldRef reads for a
	// limit the container does not set, as the kubelet does.
	Allocatable corev1.ResourceList
}

// fieldValue resolves an env fieldRef, the paths the API server admits
// for environment variables.
func fieldValue(pod Pod, ref *corev1.ObjectFieldSelector) (string, error) {
	path := ref.FieldPath
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Meta.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Meta.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Meta.Name, nil
	case "metadata.namespace":
		return pod.Meta.Namespace, nil
	case "metadata.uid":
		return string(pod.Meta.UID), nil
	case "spec.nodeName":
		return pod.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs":
		return pod.IP, nil
	}
	return "", fmt.Errorf("fieldRef %q: not a field the downward API gives a container's environment", path)
}

// subscript reads field['key'] (the form the API server validates).
func subscript(path, field string) (string, bool) {
	rest, ok := strings.CutPrefix(path, field+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// resourceValue resolves an env resourceFieldRef as the kubelet does: the
// container's request or limit in units of the divisor, rounded up; a
// limit it does not set is the node's allocatable, a request it does not
// set its limit (as the API server defaults a pod's requests).
func resourceValue(pod Pod, self string, ref *corev1.ResourceFieldSelector) (string, error) {
	name := ref.ContainerName
	if name == "" {
		name = self
	}
	var c *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			c = &pod.Spec.Containers[i]
		}
	}
	if c == nil {
		return "", fmt.Errorf("resourceFieldRef %q: the pod has no container %q", ref.Resource, name)
	}
	kind, res, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("resourceFieldRef %q: want limits.<resource> or requests.<resource>", ref.Resource)
	}
	resourceName := corev1.ResourceName(res)
	limit, hasLimit := c.Resources.Limits[resourceName]
	if !hasLimit {
		if limit, hasLimit = pod.Allocatable[resourceName]; !hasLimit {
			return "", fmt.Errorf("resourceFieldRef %q: the container sets no limit and this node states no allocatable %s", ref.Resource, res)
		}
	}
	value := limit
	if kind == "requests" {
		if request, ok := c.Resources.Requests[resourceName]; ok {
			value = request
		} else if _, set := c.Resources.Limits[resourceName]; !set {
			value = resource.Quantity{}
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if resourceName == corev1.ResourceCPU {
		return fmt.Sprint(int64(math.Ceil(float64(value.MilliValue()) / float64(divisor.MilliValue())))), nil
	}
	return fmt.Sprint(int64(math.Ceil(float64(value.Value()) / float64(divisor.Value())))), nil
}
