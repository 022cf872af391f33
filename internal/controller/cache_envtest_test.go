package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestCacheHoldsOnlyTheOperatorsObjects: a namespace user's ConfigMaps (1
// MiB each) and Job never enter the manager's cache, so they cannot make
// it grow; the operator's own children do. (A ConfigMap a spec references
// is still read and followed: TestPromptTextFromConfigMapAndRouteCount,
// TestRouteEvaluationRuns, the store's source ConfigMaps.)
func TestCacheHoldsOnlyTheOperatorsObjects(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	big := strings.Repeat("x", 1<<20-64)
	for i := range 3 {
		s.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("foreign-%d", i)},
			Data: map[string]string{"blob": big}})
	}
	s.create(t, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "foreign"},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}})
	s.routeWorld(t, ns)

	eventually(t, waitFor, "the route's ConfigMap in the cache", func() error {
		return s.cached.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support-route"}, &corev1.ConfigMap{})
	})
	configMaps := &corev1.ConfigMapList{}
	if err := s.cached.List(ctx, configMaps, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, cm := range configMaps.Items {
		if cm.Labels[managedByLabel] != managedByValue {
			t.Errorf("the cache holds ConfigMap %s, which the operator did not make (%d data bytes)", cm.Name, len(cm.Data["blob"]))
		}
	}
	jobs := &batchv1.JobList{}
	if err := s.cached.List(ctx, jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, job := range jobs.Items {
		if job.Labels[managedByLabel] == managedByValue {
			continue
		}
		t.Errorf("the cache holds Job %s, which the operator did not make", job.Name)
	}
}
