package controller

import (
	"context"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// With --image-pull-secrets, route pods and ingestion pods pull their
// image with the named Secrets: a private registry serves every pod the
// operator starts, not only its own.
func TestRouteAndIngestionPodsPullWithTheOperatorsSecrets(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	s.routeWorld(t, ns)
	want := []corev1.LocalObjectReference{{Name: testPullSecret}}
	if got := s.deployment(t, ns, "support").Spec.Template.Spec.ImagePullSecrets; !slices.Equal(got, want) {
		t.Errorf("route pods pull with %v, want %v", got, want)
	}

	docs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "docs-md"}, Data: map[string]string{"a.md": "# A\n\nText.\n"}}
	store := newStore(ns, "ingested", s.milvusURI)
	store.Spec.Milvus.Collection = "pull_" + strings.ReplaceAll(ns, "-", "_")
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Schedule: "0 3 * * *", Sources: []v1alpha1.IngestionSource{
		{Name: "docs", ConfigMap: &v1alpha1.LocalObjectRef{Name: "docs-md"}},
	}}
	s.create(t, docs, store)
	if got := s.ingestJob(t, ns, "").Spec.Template.Spec.ImagePullSecrets; !slices.Equal(got, want) {
		t.Errorf("ingestion pods pull with %v, want %v", got, want)
	}
	cron := &batchv1.CronJob{}
	eventually(t, waitFor, "the ingestion CronJob", func() error {
		return s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ingested-ingest"}, cron)
	})
	if got := cron.Spec.JobTemplate.Spec.Template.Spec.ImagePullSecrets; !slices.Equal(got, want) {
		t.Errorf("scheduled ingestion pods pull with %v, want %v", got, want)
	}
}
