package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// The QueryRoute phases, in the order Reconcile runs them under the phase
// contract (phases.go): resolve references, render the config, apply the
// children. observeDeployment runs after them whatever they found, so the
// status tells the rollout state.

// resolveReferences checks the route's image against the allow-list and
// its auth against --allow-insecure-proxy-auth, then
// fetches its KnowledgeStore, PlatformPrompt and Secrets. The first refused
// image or broken reference stops the reconcile with a reason that names
// it; the children keep serving their last good config.
func (r *QueryRouteReconciler) resolveReferences(ctx context.Context, s *routeScope) error {
	route := s.route
	// First: a refused image must never reach a pod, whatever else is broken.
	if refusal := imageRefusal(route, r.RouteImage, r.AllowedImagePrefixes); refusal != nil {
		return refusal
	}
	if refusal := insecureAuthRefusal(route, r.AllowInsecureProxyAuth); refusal != nil {
		return refusal
	}
	store := &v1alpha1.KnowledgeStore{}
	if err := r.getReferenced(ctx, route, route.Spec.KnowledgeStoreRef.Name, store); err != nil {
		if apierrors.IsNotFound(err) {
			return &referenceError{Reason: v1alpha1.ReasonKnowledgeStoreMissing,
				Message: fmt.Sprintf("KnowledgeStore %q referenced by spec.knowledgeStoreRef not found", route.Spec.KnowledgeStoreRef.Name)}
		}
		return err
	}
	if !isReady(store.Status.Conditions) {
		return &referenceError{Reason: v1alpha1.ReasonKnowledgeStoreNotReady,
			Message: fmt.Sprintf("KnowledgeStore %q is not Ready%s", store.Name, readyDetail(store.Status.Conditions))}
	}

	prompt := &v1alpha1.PlatformPrompt{}
	if err := r.getReferenced(ctx, route, route.Spec.PlatformPromptRef.Name, prompt); err != nil {
		if apierrors.IsNotFound(err) {
			return &referenceError{Reason: v1alpha1.ReasonPlatformPromptMissing,
				Message: fmt.Sprintf("PlatformPrompt %q referenced by spec.platformPromptRef not found", route.Spec.PlatformPromptRef.Name)}
		}
		return err
	}
	if !isReady(prompt.Status.Conditions) {
		return &referenceError{Reason: v1alpha1.ReasonPlatformPromptNotReady,
			Message: fmt.Sprintf("PlatformPrompt %q is not Ready%s", prompt.Name, readyDetail(prompt.Status.Conditions))}
	}
	content, err := resolvePrompt(ctx, r.APIReader, prompt)
	if err != nil {
		return err
	}

	uses := append(storeSecretKeys(&store.Spec), routeSecretKeys(&route.Spec)...)
	secrets := map[string]*corev1.Secret{}
	for _, use := range uses {
		secret, err := secretReader{cache: r.Client, live: r.APIReader}.sendable(ctx, route.Namespace, use)
		if err != nil {
			return err
		}
		secrets[secret.Name] = secret
	}

	s.inputs = routeInputs{route: route, store: store, promptName: prompt.Name, prompt: content, env: uses}
	for _, secret := range secrets {
		s.inputs.secrets = append(s.inputs.secrets, secret)
	}
	return nil
}

// renderConfig renders the effective config and its hash.
func (r *QueryRouteReconciler) renderConfig(_ context.Context, s *routeScope) error {
	data, err := marshalRouteConfig(renderRouteConfig(s.inputs))
	if err != nil {
		return err
	}
	s.configData = data
	s.configHash = routeConfigHash(data, s.inputs.secrets)
	return nil
}

// applyChildren server-side applies ConfigMap, Deployment and Service,
// and the optional NetworkPolicy (a trusted-proxy route with peers),
// PodDisruptionBudget and HorizontalPodAutoscaler, through childApplier: a
// same-named object the route does not control is refused before anything
// is written, a child already up to date is not applied again, and an
// optional child the route no longer asks for is deleted. The policy goes
// first, so pods never serve before it admits only the proxy; the
// ConfigMap goes before the Deployment so new pods never start on an old
// config. The Service, the disruption budget and the autoscaler depend on
// neither, so they are applied alongside (a new route's first reconcile
// waits for two round trips, not three).
func (r *QueryRouteReconciler) applyChildren(ctx context.Context, s *routeScope) error {
	route := s.route
	deployment := buildRouteDeployment(route, r.RouteImage, s.configHash, s.inputs.env)
	withPullSecrets(deployment.Spec.Template.Spec, r.ImagePullSecrets)
	ordered := []child{
		{"NetworkPolicy", &networkingv1.NetworkPolicy{}, route.Name, desiredState(buildRouteNetworkPolicy(route))},
		{"ConfigMap", &corev1.ConfigMap{}, routeConfigMapName(route), desiredState(buildRouteConfigMap(route, s.configData))},
		{"Deployment", &appsv1.Deployment{}, route.Name, desiredState(deployment)},
	}
	independent := []child{
		{"Service", &corev1.Service{}, route.Name, desiredState(buildRouteService(route))},
		{"PodDisruptionBudget", &policyv1.PodDisruptionBudget{}, route.Name, desiredState(buildRoutePDB(route))},
		{"HorizontalPodAutoscaler", &autoscalingv2.HorizontalPodAutoscaler{}, route.Name, desiredState(buildRouteHPA(route))},
	}
	applier := childApplier{client: r.Client, live: r.APIReader, owner: route, ownerKind: "route"}
	if err := applier.apply(ctx, ordered, independent); err != nil {
		return err
	}
	s.applied = true
	return nil
}

// observeDeployment reads the Deployment's rollout state, if it exists.
func (r *QueryRouteReconciler) observeDeployment(ctx context.Context, s *routeScope) error {
	deployment := &appsv1.Deployment{}
	err := r.Get(ctx, client.ObjectKey{Namespace: s.route.Namespace, Name: s.route.Name}, deployment)
	switch {
	case err == nil && isOwnedBy(deployment, s.route):
		s.deployment = deployment
	case client.IgnoreNotFound(err) != nil:
		return fmt.Errorf("get Deployment %s: %w", s.route.Name, err)
	}
	return nil
}

// getReferenced fetches a referenced object in the route's namespace.
// Not-found stays unwrapped-detectable for the caller to name.
func (r *QueryRouteReconciler) getReferenced(ctx context.Context, route *v1alpha1.QueryRoute, name string, obj client.Object) error {
	if err := r.Get(ctx, client.ObjectKey{Namespace: route.Namespace, Name: name}, obj); err != nil {
		return fmt.Errorf("get %T %q: %w", obj, name, err)
	}
	return nil
}

// readyDetail quotes a reference's Ready reason and message for ours.
func readyDetail(conditions []metav1.Condition) string {
	for _, c := range conditions {
		if c.Type == v1alpha1.ConditionReady {
			return fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
		}
	}
	return " (not reconciled yet)"
}

// isOwnedBy reports whether route controls obj.
func isOwnedBy(obj client.Object, route *v1alpha1.QueryRoute) bool {
	return metav1.IsControlledBy(obj, route)
}
