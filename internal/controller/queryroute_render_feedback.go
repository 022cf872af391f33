package controller

import (
	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// renderFeedback is the route's feedback: on, for 30 days, unless the
// spec says otherwise.
func renderFeedback(f *v1alpha1.RouteFeedback) podconfig.Feedback {
	out := podconfig.Feedback{Enabled: true, Retention: podconfig.Duration(v1alpha1.DefaultFeedbackRetention)}
	if f == nil {
		return out
	}
	if f.Enabled != nil && !*f.Enabled {
		return podconfig.Feedback{}
	}
	out.Retention = durationOr(f.Retention, out.Retention)
	return out
}
