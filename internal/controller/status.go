package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// fieldOwner is the server-side apply field manager of everything the
// operator writes: children and the status fields it owns.
const fieldOwner = client.FieldOwner("ragroute-operator")

// applyStatus server-side applies status as the status of obj, forcing
// ownership: each kind's status has one writer, its reconciler (the
// KnowledgeStore reconciler sets Connected, SchemaReady, Indexed and Ready
// alike). A status equal to the one obj already has is not written: the
// request would change nothing.
func applyStatus(ctx context.Context, c client.Client, obj client.Object, status any) error {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return fmt.Errorf("status of %s: %w", obj.GetName(), err)
	}
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		return fmt.Errorf("status of %s: %w", obj.GetName(), err)
	}
	unchanged, err := statusUnchanged(obj, fields)
	if err != nil {
		return fmt.Errorf("status of %s: %w", obj.GetName(), err)
	}
	if unchanged {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	u.Object["status"] = fields
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), fieldOwner, client.ForceOwnership); err != nil {
		return fmt.Errorf("apply status of %s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// statusUnchanged reports whether fields (a status in unstructured form)
// equal obj's current status. Both sides go through the same conversion,
// which normalises what the API server would: empty fields are left out
// and times are written to the second, as they are stored.
func statusUnchanged(obj client.Object, fields map[string]any) (bool, error) {
	current, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false, err
	}
	status, _, err := unstructured.NestedFieldNoCopy(current, "status")
	if err != nil {
		return false, err
	}
	if status == nil {
		status = map[string]any{}
	}
	return equality.Semantic.DeepEqual(status, any(fields)), nil
}

// publishStatus records a Ready transition as an event and applies status.
func publishStatus(ctx context.Context, c client.Client, recorder events.EventRecorder, obj client.Object,
	before, after []metav1.Condition, status any) error {
	recordReadyTransition(recorder, obj, before, after)
	return applyStatus(ctx, c, obj, status)
}

// setCondition records a condition, keeping its transition time while its
// status does not change.
func setCondition(conditions *[]metav1.Condition, c metav1.Condition, generation int64, now time.Time) {
	c.ObservedGeneration = generation
	c.LastTransitionTime = metav1.NewTime(now)
	meta.SetStatusCondition(conditions, c)
}

// condition builds a condition from the facts a pure check found.
func condition(conditionType string, ok bool, reason, message string) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: message}
}
