package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultFeedbackRetention is how long a route keeps a verdict when
// spec.feedback.retention is unset.
const DefaultFeedbackRetention = 30 * 24 * time.Hour

// RouteFeedback is what the route's users say of its answers: a thumbs
// up or down on a turn (POST /v1/turns/{id}/feedback, the page's thumbs),
// with an optional comment, the source the user expected and whether the
// answer was invented. Verdicts are kept in the turn log's backend
// (spec.turns.backend), sealed like the turns, with the turn's question,
// answer, citations and fragments, so `ragroute feedback export` can turn
// the down-rated ones into RouteEvaluation questions. Only the user who
// asked may rate a turn, until spec.turns.retention passes; no user can
// read a verdict back. Comments may hold personal data: whoever can read
// the route's Redis (its credentials and seal key) can read them.
type RouteFeedback struct {
	// Enabled takes verdicts. False turns it all off: the page shows no
	// thumbs, the endpoint answers 404 feedback_disabled, and nothing of a
	// turn is kept for rating.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`

	// Retention keeps each verdict, with its turn, this long (from its
	// last rating), then it is deleted. Longer keeps more to learn from,
	// and more personal data in comments. With the memory turn backend a
	// replica's restart loses them sooner, and no export can read them.
	// +optional
	// +kubebuilder:default="720h"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1h') && duration(self) <= duration('8760h')",message="feedback.retention must be between 1h and 8760h (a year)"
	Retention *metav1.Duration `json:"retention,omitempty"`
}
