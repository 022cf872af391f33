package controller

import (
	"encoding/json"
	"maps"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// A route's pod settings, disruption budget and autoscaler: what an admin
// sets on the QueryRoute reaches its pods, and two optional children.

// turnsInFlightMetric is the pods metric the autoscaler may target.
const turnsInFlightMetric = "ragroute_turns_in_flight"

// withPodSettings puts the route's pod metadata and scheduling on template.
// The operator's own labels and annotations win over the admin's.
func withPodSettings(template *corev1ac.PodTemplateSpecApplyConfiguration, route *v1alpha1.QueryRoute) {
	p := route.Spec.Pod
	if p == nil {
		return
	}
	labels := maps.Clone(p.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, template.Labels)
	template.WithLabels(labels)
	annotations := maps.Clone(p.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, template.Annotations)
	template.WithAnnotations(annotations)

	spec := template.Spec
	if len(p.NodeSelector) > 0 {
		spec.WithNodeSelector(p.NodeSelector)
	}
	for _, t := range p.Tolerations {
		spec.WithTolerations(applyConfigOf[corev1ac.TolerationApplyConfiguration](t))
	}
	if p.Affinity != nil {
		spec.WithAffinity(applyConfigOf[corev1ac.AffinityApplyConfiguration](*p.Affinity))
	}
	for _, c := range p.TopologySpreadConstraints {
		constraint := applyConfigOf[corev1ac.TopologySpreadConstraintApplyConfiguration](c)
		if constraint.LabelSelector == nil {
			constraint.WithLabelSelector(metav1ac.LabelSelector().WithMatchLabels(routeSelector(route)))
		}
		spec.WithTopologySpreadConstraints(constraint)
	}
	if p.PriorityClassName != "" {
		spec.WithPriorityClassName(p.PriorityClassName)
	}
}

// applyConfigOf converts an API type to its apply configuration, which
// has the same JSON shape.
func applyConfigOf[T any](v any) *T {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // API types always marshal
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		panic(err)
	}
	return out
}

// buildRoutePDB is the route's PodDisruptionBudget, or nil without one.
func buildRoutePDB(route *v1alpha1.QueryRoute) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	budget := route.Spec.DisruptionBudget
	if budget == nil {
		return nil
	}
	spec := policyv1ac.PodDisruptionBudgetSpec().WithSelector(metav1ac.LabelSelector().WithMatchLabels(routeSelector(route)))
	if budget.MinAvailable != nil {
		spec.WithMinAvailable(*budget.MinAvailable)
	}
	if budget.MaxUnavailable != nil {
		spec.WithMaxUnavailable(*budget.MaxUnavailable)
	}
	return policyv1ac.PodDisruptionBudget(route.Name, route.Namespace).
		WithLabels(routeLabels(route)).WithOwnerReferences(routeOwner(route)).WithSpec(spec)
}

// buildRouteHPA is the route's HorizontalPodAutoscaler, or nil without one.
func buildRouteHPA(route *v1alpha1.QueryRoute) *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration {
	scaling := route.Spec.Autoscaling
	if scaling == nil {
		return nil
	}
	spec := autoscalingv2ac.HorizontalPodAutoscalerSpec().
		WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion("apps/v1").WithKind("Deployment").WithName(route.Name)).
		WithMinReplicas(max(scaling.MinReplicas, 1)).
		WithMaxReplicas(scaling.MaxReplicas)
	if target := scaling.TargetCPUUtilizationPercentage; target != nil {
		spec.WithMetrics(autoscalingv2ac.MetricSpec().WithType(autoscalingv2.ResourceMetricSourceType).
			WithResource(autoscalingv2ac.ResourceMetricSource().WithName(corev1.ResourceCPU).
				WithTarget(autoscalingv2ac.MetricTarget().WithType(autoscalingv2.UtilizationMetricType).WithAverageUtilization(*target))))
	}
	if target := scaling.TargetTurnsInFlightPerPod; target != nil {
		spec.WithMetrics(autoscalingv2ac.MetricSpec().WithType(autoscalingv2.PodsMetricSourceType).
			WithPods(autoscalingv2ac.PodsMetricSource().
				WithMetric(autoscalingv2ac.MetricIdentifier().WithName(turnsInFlightMetric)).
				WithTarget(autoscalingv2ac.MetricTarget().WithType(autoscalingv2.AverageValueMetricType).
					WithAverageValue(*resourceQuantity(int64(*target))))))
	}
	return autoscalingv2ac.HorizontalPodAutoscaler(route.Name, route.Namespace).
		WithLabels(routeLabels(route)).WithOwnerReferences(routeOwner(route)).WithSpec(spec)
}

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }
