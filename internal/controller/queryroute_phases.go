package controller

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
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

// resolveReferences checks the route's image against the allow-list, then
// fetches its KnowledgeStore, PlatformPrompt and Secrets. The first refused
// image or broken reference stops the reconcile with a reason that names
// it; the children keep serving their last good config.
func (r *QueryRouteReconciler) resolveReferences(ctx context.Context, s *routeScope) error {
	route := s.route
	// First: a refused image must never reach a pod, whatever else is broken.
	if refusal := imageRefusal(route, r.RouteImage, r.AllowedImagePrefixes); refusal != nil {
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
	content, err := resolvePrompt(ctx, r.Client, prompt)
	if err != nil {
		return err
	}

	uses := append(storeSecretKeys(&store.Spec), routeSecretKeys(&route.Spec)...)
	secrets := map[string]*corev1.Secret{}
	for _, use := range uses {
		secret, err := secretReader{cache: r.Client, live: r.APIReader}.key(ctx, route.Namespace, use.field, &use.ref)
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
// and for a trusted-proxy route with peers its NetworkPolicy. The policy
// goes first, so pods never serve before it admits only the proxy; the
// ConfigMap goes before the Deployment so new pods never start on an old
// config; the Service, which depends on neither, is applied alongside them
// (a new route's first reconcile waits for two round trips, not three). A
// child the cache shows controlled by the route and carrying the hash of
// its desired state (appliedHashAnnotation) is not applied again. Every
// child is checked for a foreign owner before any is applied. A policy the
// route no longer asks for is deleted.
func (r *QueryRouteReconciler) applyChildren(ctx context.Context, s *routeScope) error {
	route := s.route
	configMap, err := withAppliedHash(buildRouteConfigMap(route, s.configData))
	if err != nil {
		return err
	}
	desired := buildRouteDeployment(route, r.RouteImage, s.configHash, s.inputs.env)
	withPullSecrets(desired.Spec.Template.Spec, r.ImagePullSecrets)
	deployment, err := withAppliedHash(desired)
	if err != nil {
		return err
	}
	service, err := withAppliedHash(buildRouteService(route))
	if err != nil {
		return err
	}
	ordered := []childApply{{&corev1.ConfigMap{}, configMap}, {&appsv1.Deployment{}, deployment}}
	if desired := buildRouteNetworkPolicy(route); desired != nil {
		policy, err := withAppliedHash(desired)
		if err != nil {
			return err
		}
		ordered = append([]childApply{{&networkingv1.NetworkPolicy{}, policy}}, ordered...)
	} else if err := r.deleteUnwanted(ctx, route, &networkingv1.NetworkPolicy{}, "NetworkPolicy"); err != nil {
		return &refusedWrite{err}
	}
	// The Service, the disruption budget and the autoscaler depend on
	// neither the config nor the Deployment's template.
	independent := []childApply{{&corev1.Service{}, service}}
	if desired := buildRoutePDB(route); desired != nil {
		pdb, err := withAppliedHash(desired)
		if err != nil {
			return err
		}
		independent = append(independent, childApply{&policyv1.PodDisruptionBudget{}, pdb})
	} else if err := r.deleteUnwanted(ctx, route, &policyv1.PodDisruptionBudget{}, "PodDisruptionBudget"); err != nil {
		return &refusedWrite{err}
	}
	if desired := buildRouteHPA(route); desired != nil {
		hpa, err := withAppliedHash(desired)
		if err != nil {
			return err
		}
		independent = append(independent, childApply{&autoscalingv2.HorizontalPodAutoscaler{}, hpa})
	} else if err := r.deleteUnwanted(ctx, route, &autoscalingv2.HorizontalPodAutoscaler{}, "HorizontalPodAutoscaler"); err != nil {
		return &refusedWrite{err}
	}
	chains := [][]childApply{ordered, independent}
	for _, chain := range chains {
		for _, child := range chain {
			if err := r.checkNotForeign(ctx, route, child.existing, child.name); err != nil {
				return err
			}
		}
	}
	group, groupCtx := errgroup.WithContext(ctx)
	for _, chain := range chains {
		group.Go(func() error { return r.applyChain(groupCtx, route, chain) })
	}
	if err := group.Wait(); err != nil {
		return &refusedWrite{err}
	}
	s.applied = true
	return nil
}

// deleteUnwanted removes the route's optional child of obj's kind, named
// after the route, if the cache shows one it controls (the route dropped
// its peers, its disruption budget or its autoscaling).
func (r *QueryRouteReconciler) deleteUnwanted(ctx context.Context, route *v1alpha1.QueryRoute, obj client.Object, kind string) error {
	err := r.Get(ctx, client.ObjectKey{Namespace: route.Namespace, Name: route.Name}, obj)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("get %s %s: %w", kind, route.Name, err)
	}
	if err != nil || !isOwnedBy(obj, route) {
		return nil
	}
	if err := r.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s %s: %w", kind, route.Name, err)
	}
	return nil
}

// childApply is one child: as the cache holds it, and as it should be.
type childApply struct {
	existing client.Object
	hashedChild
}

// applyChain applies children in order, skipping those already up to date.
func (r *QueryRouteReconciler) applyChain(ctx context.Context, route *v1alpha1.QueryRoute, chain []childApply) error {
	for _, child := range chain {
		if appliedUpToDate(child.existing, route, child.hash) {
			continue
		}
		if err := r.Apply(ctx, child.apply, fieldOwner, client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %T %s: %w", child.existing, child.name, err)
		}
	}
	return nil
}

// checkNotForeign refuses to take over an object of the same name that the
// route does not own: applying with force would silently adopt it. obj is
// left as the cache holds it (empty when there is none).
func (r *QueryRouteReconciler) checkNotForeign(ctx context.Context, route *v1alpha1.QueryRoute, obj client.Object, name string) error {
	err := r.Get(ctx, client.ObjectKey{Namespace: route.Namespace, Name: name}, obj)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("get %T %s: %w", obj, name, err)
	}
	if err == nil && !isOwnedBy(obj, route) {
		return &referenceError{Reason: v1alpha1.ReasonChildConflict,
			Message: fmt.Sprintf("%T %q exists and is not owned by this route; rename the route or remove it", obj, name)}
	}
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
