package controller

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// buildRouteNetworkPolicy admits only the trusted proxy to a
// trusted-proxy route's API port, so no other pod can reach the port where
// identity headers are believed, and only the monitoring peers to its
// metrics port. Nil when the route names no peers: then there is nothing
// to render, and an existing policy goes.
//
// A RouteEvaluation's run pods of the namespace are admitted as well when
// the route checks the proxy's shared secret: they ask with it, as the
// proxy does. A route that checks none (insecureAllowAnyCaller) believes
// whoever reaches it, so a pod's labels must not be enough; its peers
// must then include the run pods themselves.
func buildRouteNetworkPolicy(route *v1alpha1.QueryRoute) *networkingv1ac.NetworkPolicyApplyConfiguration {
	proxy := route.Spec.Auth.TrustedProxy
	if proxy == nil || len(proxy.From) == 0 {
		return nil
	}
	from := proxy.From
	if proxy.SecretRef != nil {
		from = append(slices.Clone(from), v1alpha1.NetworkPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			"app.kubernetes.io/name": evalAppName, evalRouteLabel: route.Name}}})
	}
	rules := []*networkingv1ac.NetworkPolicyIngressRuleApplyConfiguration{ingressTo(routePortName, from)}
	if len(proxy.MonitoringFrom) > 0 {
		rules = append(rules, ingressTo(routeMetricsPortName, proxy.MonitoringFrom))
	}
	return networkingv1ac.NetworkPolicy(route.Name, route.Namespace).
		WithLabels(routeLabels(route)).
		WithOwnerReferences(routeOwner(route)).
		WithSpec(networkingv1ac.NetworkPolicySpec().
			WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(routeSelector(route))).
			WithPolicyTypes(networkingv1.PolicyTypeIngress).
			WithIngress(rules...))
}

// ingressTo admits peers to the pods' named port.
func ingressTo(port string, peers []v1alpha1.NetworkPeer) *networkingv1ac.NetworkPolicyIngressRuleApplyConfiguration {
	rule := networkingv1ac.NetworkPolicyIngressRule().
		WithPorts(networkingv1ac.NetworkPolicyPort().WithProtocol(corev1.ProtocolTCP).WithPort(intstr.FromString(port)))
	for _, peer := range peers {
		rule.WithFrom(networkPeer(peer))
	}
	return rule
}

func networkPeer(peer v1alpha1.NetworkPeer) *networkingv1ac.NetworkPolicyPeerApplyConfiguration {
	out := networkingv1ac.NetworkPolicyPeer()
	if peer.NamespaceSelector != nil {
		out.WithNamespaceSelector(labelSelector(peer.NamespaceSelector))
	}
	if peer.PodSelector != nil {
		out.WithPodSelector(labelSelector(peer.PodSelector))
	}
	return out
}

// labelSelector converts a selector as written in the spec ({} selects all).
func labelSelector(in *metav1.LabelSelector) *metav1ac.LabelSelectorApplyConfiguration {
	out := metav1ac.LabelSelector() // written as {} (all) when empty
	if len(in.MatchLabels) > 0 {
		out.WithMatchLabels(in.MatchLabels)
	}
	for _, expr := range in.MatchExpressions {
		out.WithMatchExpressions(metav1ac.LabelSelectorRequirement().
			WithKey(expr.Key).WithOperator(expr.Operator).WithValues(expr.Values...))
	}
	return out
}
