package podconfig

import "fmt"

// Feedback is the users' verdicts on answers (POST
// /v1/turns/{id}/feedback): off, nothing is kept and the endpoint answers
// feedback_disabled. Verdicts live in the turn log's backend.
type Feedback struct {
	Enabled bool `json:"enabled"`
	// Retention keeps a verdict, with its turn's question, answer and
	// citations, this long.
	Retention Duration `json:"retention,omitempty"`
}

func (f Feedback) validate() []error {
	if f.Enabled && f.Retention <= 0 {
		return []error{fmt.Errorf("feedback.retention %s must be positive when feedback is enabled", f.Retention.Std())}
	}
	return nil
}
