package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// resolveReferences fetches the route's KnowledgeStore, PlatformPrompt and
// Secrets. The first broken reference stops the reconcile with a reason
// that names it; the children keep serving their last good config.
func (r *QueryRouteReconciler) resolveReferences(ctx context.Context, s *routeScope) error {
	route := s.route
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
		secret, err := getSecretKey(ctx, r.Client, route.Namespace, use.field, &use.ref)
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

// marshalRouteConfig renders the config file.
func marshalRouteConfig(cfg podconfig.RouteConfig) ([]byte, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &referenceError{Reason: v1alpha1.ReasonRenderFailed, Message: err.Error()}
	}
	return podconfig.Marshal(cfg)
}
