package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// setRouteImage sets a route's spec.image, retrying when its status moved.
func (s *suite) setRouteImage(t *testing.T, ns, name, image string) {
	t.Helper()
	eventually(t, waitFor, "set spec.image of "+name, func() error {
		route := s.getRoute(t, ns, name)
		route.Spec.Image = image
		return s.client.Update(context.Background(), route)
	})
}

// waitRouteImage waits until the route's Deployment runs image.
func (s *suite) waitRouteImage(t *testing.T, ns, name, image string) {
	t.Helper()
	eventually(t, waitFor, name+" runs "+image, func() error {
		if got := s.deployment(t, ns, name).Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Errorf("image %q", got)
		}
		return nil
	})
}

func TestRouteImageOutsideAllowListIsRefused(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	s.routeWorld(t, ns)
	s.waitRouteImage(t, ns, "support", testRouteImage)

	// An image under the allow-list rolls out.
	allowed := testImagePrefix + "/route:2"
	s.setRouteImage(t, ns, "support", allowed)
	s.waitRouteImage(t, ns, "support", allowed)

	// A look-alike repository is refused, named, and never reaches a pod:
	// the running pods keep the last allowed image.
	evil := testImagePrefix + "-evil:1"
	s.setRouteImage(t, ns, "support", evil)
	route := s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonImageNotAllowed)
	if d := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != v1alpha1.ReasonImageNotAllowed {
		t.Errorf("Degraded = %+v", d)
	}
	c := meta.FindStatusCondition(route.Status.Conditions, v1alpha1.ConditionReady)
	for _, want := range []string{`"` + evil + `"`, "--allowed-image-prefixes"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Ready message %q lacks %s", c.Message, want)
		}
	}
	if got := s.deployment(t, ns, "support").Spec.Template.Spec.Containers[0].Image; got != allowed {
		t.Errorf("the Deployment runs %q after the refusal, want the last allowed %q", got, allowed)
	}

	// A new route with a refused image gets no Deployment at all.
	fresh := newRoute(ns, "fresh", "docs", "default")
	fresh.Spec.Image = "evil.example/miner:latest"
	s.create(t, fresh)
	s.waitCondition(t, ns, "fresh", v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonImageNotAllowed)
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fresh"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("a route with a refused image has a Deployment (err=%v)", err)
	}
	deployments := &appsv1.DeploymentList{}
	if err := s.client.List(ctx, deployments, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, d := range deployments.Items {
		for _, container := range d.Spec.Template.Spec.Containers {
			if container.Image == evil || container.Image == fresh.Spec.Image {
				t.Errorf("Deployment %s runs the refused image %q", d.Name, container.Image)
			}
		}
	}

	// Back to the operator's image: the route recovers by itself.
	s.setRouteImage(t, ns, "support", "")
	s.waitCondition(t, ns, "support", v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonReferencesResolved)
	s.waitRouteImage(t, ns, "support", testRouteImage)
}
