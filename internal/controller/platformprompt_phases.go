package controller

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// The PlatformPrompt phases, in the order Reconcile runs them under the
// phase contract (phases.go): count the routes that use the prompt, then
// resolve its content. A missing ConfigMap or an invalid text (a
// referenceError) is reported in Ready; the route count is shown either way.

// countRoutes counts the routes in the prompt's namespace that use it.
func (r *PlatformPromptReconciler) countRoutes(ctx context.Context, s *promptScope) error {
	routes := &v1alpha1.QueryRouteList{}
	if err := r.List(ctx, routes, client.InNamespace(s.prompt.Namespace),
		client.MatchingFields{indexRouteByPrompt: s.prompt.Name}); err != nil {
		return fmt.Errorf("list routes using PlatformPrompt %q: %w", s.prompt.Name, err)
	}
	s.routes = int32(len(routes.Items))
	return nil
}

// resolveContent resolves the prompt's text (following textFrom), checks
// it and hashes the content.
func (r *PlatformPromptReconciler) resolveContent(ctx context.Context, s *promptScope) error {
	content, err := resolvePrompt(ctx, r.APIReader, s.prompt)
	if err != nil {
		return err
	}
	s.hash = content.Hash()
	return nil
}
