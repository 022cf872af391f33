package controller

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// Every pod the operator builds runs in a namespace that enforces the
// "restricted" Pod Security Standard, and none mounts an API token.
func TestEveryPodMeetsTheRestrictedStandard(t *testing.T) {
	in := fullInputs()
	store := in.store
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Schedule: "0 * * * *",
		Sources: []v1alpha1.IngestionSource{{Name: "faq", ConfigMap: &v1alpha1.LocalObjectRef{Name: "faq-md"}}}}
	run := evaluationRun{evaluation: goldenEvaluation(), route: goldenEvaluationRoute(), image: "img", job: "run"}
	pods := map[string]*corev1ac.PodSpecApplyConfiguration{
		"route":       buildRouteDeployment(in.route, "img", "hash", in.env).Spec.Template.Spec,
		"ingest job":  buildIngestJob(store, "img", "0123456789abcdef", nil).Spec.Template.Spec,
		"ingest cron": buildIngestCronJob(store, "img", "0123456789abcdef", nil).Spec.JobTemplate.Spec.Template.Spec,
		"evaluation":  buildEvaluationJob(run).Spec.Template.Spec,
	}
	isTrue := func(b *bool) bool { return b != nil && *b }
	isFalse := func(b *bool) bool { return b != nil && !*b }
	for name, pod := range pods {
		if !isFalse(pod.AutomountServiceAccountToken) || !isFalse(pod.EnableServiceLinks) {
			t.Errorf("%s: mounts a service account token or injects Service environment", name)
		}
		sc := pod.SecurityContext
		if sc == nil || !isTrue(sc.RunAsNonRoot) || sc.SeccompProfile == nil || *sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: the pod may run as root or without the RuntimeDefault seccomp profile", name)
		}
		for _, c := range pod.Containers {
			cs := c.SecurityContext
			if cs == nil || !isFalse(cs.AllowPrivilegeEscalation) || !isTrue(cs.ReadOnlyRootFilesystem) ||
				cs.Capabilities == nil || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("%s: container %s is not restricted: %+v", name, *c.Name, cs)
			}
		}
	}
}
