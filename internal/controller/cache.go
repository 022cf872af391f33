package controller

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// CacheOptions shape the manager's informer cache, which holds every
// route's children and so grows with the routes. It holds only the
// operator's own objects and the Secrets and pods it is meant to read, so
// no one who may create objects in a namespace can make it grow with
// theirs (a namespace of 1 MiB ConfigMaps once ran it out of memory).
// Cached objects keep only what the reconcilers read:
//
//   - ConfigMaps, Deployments, Services, Jobs, CronJobs, NetworkPolicies,
//     PodDisruptionBudgets and HorizontalPodAutoscalers are cached only
//     when labelled app.kubernetes.io/managed-by=ragroute, as every child
//     the operator applies is: the API server filters the rest out. A
//     user's ConfigMap a spec references (a prompt's text, a source, a
//     question set) is read from the API server (APIReader), and watched
//     through its metadata alone (ReferencedConfigMapsOptions); a child
//     missing from the cache is looked up there too before one is
//     applied (childApplier), so a same-named object without the label is
//     still never taken over;
//   - no object keeps its managed fields: no reconciler reads them, and on
//     server-side-applied children they are often larger than the rest;
//   - a route's Deployment keeps its metadata and status but not its pod
//     template: a reconcile compares the applied-hash annotation, never
//     the template, and reads the rollout from the status;
//   - a route's ConfigMap keeps its metadata but not its data, which only
//     route pods read;
//   - a route's Service keeps its metadata alone: a reconcile compares
//     its applied-hash annotation and owner, nothing of its spec or
//     status (at 5,000 routes, Services were the largest child left whole);
//   - only Secrets labelled ragroute.io/use=true are cached and watched:
//     the operator holds the Secrets admins opted in, not every Secret in
//     the cluster;
//   - only Pods labelled app.kubernetes.io/name=ragroute-eval (a
//     RouteEvaluation's runs, whose termination message the operator
//     reads) are cached and watched, never the cluster's other pods.
//
// namespaces, when not empty, are the only namespaces the cache lists and
// watches (--watch-namespaces): objects elsewhere are never seen, so never
// reconciled. Empty means every namespace. The ByObject entries leave their
// Namespaces unset, so controller-runtime copies these namespaces into each
// and every namespace keeps the entry's transform and label selector: a
// namespaced install still caches only opted-in Secrets.
func CacheOptions(namespaces []string) cache.Options {
	strip := cache.TransformStripManagedFields()
	managed := labels.SelectorFromSet(labels.Set{managedByLabel: managedByValue})
	own := cache.ByObject{Transform: strip, Label: managed}
	return cache.Options{
		DefaultNamespaces: watchedNamespaces(namespaces),
		DefaultTransform:  strip,
		ByObject: map[client.Object]cache.ByObject{
			&appsv1.Deployment{}:                     {Transform: then(strip, trimRouteDeployment), Label: managed},
			&corev1.ConfigMap{}:                      {Transform: then(strip, trimRouteConfigMap), Label: managed},
			&corev1.Service{}:                        {Transform: then(strip, trimRouteService), Label: managed},
			&batchv1.Job{}:                           own,
			&batchv1.CronJob{}:                       own,
			&networkingv1.NetworkPolicy{}:            own,
			&policyv1.PodDisruptionBudget{}:          own,
			&autoscalingv2.HorizontalPodAutoscaler{}: own,
			// Only evaluation runs' pods: the operator reads no others.
			&corev1.Pod{}: {Transform: strip,
				Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/name": evalAppName})},
			&corev1.Secret{}: {Transform: strip,
				Label: labels.SelectorFromSet(labels.Set{secretUseLabel: secretUseValue})},
		},
	}
}

// ReferencedConfigMapsOptions shape the second, metadata-only cache that
// watches the ConfigMaps specs reference (which the main cache, holding
// only the operator's own, never sees): each ConfigMap of the watched
// namespaces is listed and watched as metadata, so the API server never
// sends its data, and kept as its name, namespace, UID and resource
// version alone (keepIdentity): what a watch maps to referrers and a
// store hashes into its run. Contents are read from the API server.
func ReferencedConfigMapsOptions(namespaces []string) cache.Options {
	return cache.Options{DefaultNamespaces: watchedNamespaces(namespaces), DefaultTransform: keepIdentity}
}

// watchedNamespaces are the caches' DefaultNamespaces for
// --watch-namespaces: nil (every namespace) when there are none.
func watchedNamespaces(namespaces []string) map[string]cache.Config {
	var watched map[string]cache.Config
	for _, ns := range namespaces {
		if ns == "" {
			continue
		}
		if watched == nil {
			watched = map[string]cache.Config{}
		}
		watched[ns] = cache.Config{}
	}
	return watched
}

// configMapMetadata is the object a metadata-only watch of ConfigMaps
// lists and gets.
func configMapMetadata() *metav1.PartialObjectMetadata {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return meta
}

// keepIdentity keeps of an object's metadata only what names and versions
// it: labels, annotations (up to 256 KiB) and owners are dropped.
func keepIdentity(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
			DeletionTimestamp: m.DeletionTimestamp}}, nil
	}
	return obj, nil
}

// ParseNamespaces splits a comma-separated --watch-namespaces value,
// dropping blanks and repeats; "" gives none (every namespace).
func ParseNamespaces(s string) []string {
	var out []string
	for _, ns := range strings.Split(s, ",") {
		ns = strings.TrimSpace(ns)
		if ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// then runs first, then second.
func then(first, second func(any) (any, error)) func(any) (any, error) {
	return func(obj any) (any, error) {
		obj, err := first(obj)
		if err != nil {
			return obj, err
		}
		return second(obj)
	}
}

// trimRouteDeployment drops a route Deployment's pod template but its
// config hash, which tells whether the cached Deployment is the current
// configuration's.
func trimRouteDeployment(obj any) (any, error) {
	if d, ok := obj.(*appsv1.Deployment); ok && controlledByRoute(d) {
		hash, hashed := d.Spec.Template.Annotations[configHashAnnotation]
		d.Spec.Template = corev1.PodTemplateSpec{}
		if hashed {
			d.Spec.Template.Annotations = map[string]string{configHashAnnotation: hash}
		}
	}
	return obj, nil
}

func trimRouteConfigMap(obj any) (any, error) {
	if cm, ok := obj.(*corev1.ConfigMap); ok && controlledByRoute(cm) {
		cm.Data, cm.BinaryData = nil, nil
	}
	return obj, nil
}

// trimRouteService drops a route Service's spec and status.
func trimRouteService(obj any) (any, error) {
	if svc, ok := obj.(*corev1.Service); ok && controlledByRoute(svc) {
		svc.Spec, svc.Status = corev1.ServiceSpec{}, corev1.ServiceStatus{}
	}
	return obj, nil
}

// controlledByRoute reports whether a QueryRoute is obj's controller.
func controlledByRoute(obj metav1.Object) bool {
	owner := metav1.GetControllerOf(obj)
	return owner != nil && owner.Kind == "QueryRoute" && owner.APIVersion == v1alpha1.GroupVersion.String()
}
