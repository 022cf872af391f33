package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// Feedback is on for 30 days unless the QueryRoute says otherwise;
// enabled: false renders it off, whatever the retention.
func TestRouteFeedbackIsRendered(t *testing.T) {
	no := false
	for name, c := range map[string]struct {
		spec *v1alpha1.RouteFeedback
		want podconfig.Feedback
	}{
		"unset":     {nil, podconfig.Feedback{Enabled: true, Retention: podconfig.Duration(720 * time.Hour)}},
		"retention": {&v1alpha1.RouteFeedback{Retention: &metav1.Duration{Duration: 48 * time.Hour}}, podconfig.Feedback{Enabled: true, Retention: podconfig.Duration(48 * time.Hour)}},
		"off":       {&v1alpha1.RouteFeedback{Enabled: &no, Retention: &metav1.Duration{Duration: 48 * time.Hour}}, podconfig.Feedback{}},
	} {
		route := newRoute("acme", "support", "docs", "default")
		route.Spec.Feedback = c.spec
		cfg := renderRouteConfig(routeInputs{route: route, store: newStore("acme", "docs", "http://milvus:19530"), promptName: "p"})
		if cfg.Feedback != c.want {
			t.Errorf("%s: rendered %+v, want %+v", name, cfg.Feedback, c.want)
		}
	}
}
