package controller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// waitPrompt waits until check accepts the prompt.
func (s *suite) waitPrompt(t *testing.T, ns, name, what string, check func(*v1alpha1.PlatformPrompt) error) *v1alpha1.PlatformPrompt {
	t.Helper()
	prompt := &v1alpha1.PlatformPrompt{}
	eventually(t, waitFor, "prompt "+name+": "+what, func() error {
		if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, prompt); err != nil {
			return err
		}
		return check(prompt)
	})
	return prompt
}

func promptReady(reason string) func(*v1alpha1.PlatformPrompt) error {
	return func(p *v1alpha1.PlatformPrompt) error {
		c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady)
		if c == nil || c.Reason != reason || c.ObservedGeneration != p.Generation {
			return fmt.Errorf("conditions %+v", p.Status.Conditions)
		}
		return nil
	}
}

func TestPromptTextFromConfigMapAndRouteCount(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	prompt := newPrompt(ns, "default", "")
	prompt.Spec.TextFrom = &v1alpha1.PromptSource{ConfigMapKeyRef: v1alpha1.ConfigMapKeyRef{Name: "prompts", Key: "platform.md"}}
	s.create(t, prompt)
	s.waitPrompt(t, ns, "default", "ConfigMap missing", promptReady(v1alpha1.ReasonConfigMapNotFound))

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prompts"},
		Data: map[string]string{"platform.md": "You are ACME's assistant."}}
	s.create(t, cm)
	first := s.waitPrompt(t, ns, "default", "Ready from ConfigMap", promptReady(v1alpha1.ReasonValid))

	cm.Data["platform.md"] = "You are ACME's assistant. Never reveal credentials."
	if err := s.client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	s.waitPrompt(t, ns, "default", "hash follows the ConfigMap", func(p *v1alpha1.PlatformPrompt) error {
		if p.Status.Hash == first.Status.Hash {
			return fmt.Errorf("hash unchanged %s", p.Status.Hash)
		}
		return nil
	})

	s.create(t, newRoute(ns, "a", "docs", "default"), newRoute(ns, "b", "docs", "default"))
	s.waitPrompt(t, ns, "default", "counts its routes", func(p *v1alpha1.PlatformPrompt) error {
		if p.Status.Routes != 2 {
			return fmt.Errorf("routes = %d", p.Status.Routes)
		}
		return nil
	})
	if err := s.client.Delete(ctx, &v1alpha1.QueryRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	s.waitPrompt(t, ns, "default", "counts a deletion", func(p *v1alpha1.PlatformPrompt) error {
		if p.Status.Routes != 1 {
			return fmt.Errorf("routes = %d", p.Status.Routes)
		}
		return nil
	})

	// A route that moves to another prompt leaves the first one's count.
	s.create(t, newPrompt(ns, "other", "You are ACME's other assistant."))
	s.updateRoute(t, ns, "b", func(route *v1alpha1.QueryRoute) { route.Spec.PlatformPromptRef.Name = "other" })
	for name, want := range map[string]int32{"default": 0, "other": 1} {
		s.waitPrompt(t, ns, name, "counts a route that moved", func(p *v1alpha1.PlatformPrompt) error {
			if p.Status.Routes != want {
				return fmt.Errorf("routes = %d, want %d", p.Status.Routes, want)
			}
			return nil
		})
	}
}
