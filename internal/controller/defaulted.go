package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// orDefault is an optional spec field's value, or def when it is unset.
func orDefault[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

// durationOr is an optional spec duration as the pods' config writes it,
// or def when it is unset.
func durationOr(d *metav1.Duration, def podconfig.Duration) podconfig.Duration {
	if d == nil {
		return def
	}
	return podconfig.Duration(d.Duration)
}
