package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// kubectl scale and a HorizontalPodAutoscaler reach a route through its
// scale subresource: the Deployment follows, the selector finds the
// route's pods, and the schema's rules still hold (more than one replica
// needs the Redis turn log).
func TestRouteScalesThroughTheScaleSubresource(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	s.routeWorld(t, ns)
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonNoReadyReplicas)

	route := &v1alpha1.QueryRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "support"}}
	scale := &autoscalingv1.Scale{}
	eventually(t, waitFor, "the scale subresource's selector", func() error {
		if err := s.client.SubResource("scale").Get(ctx, route, scale); err != nil {
			return err
		}
		if want := "app.kubernetes.io/instance=support,app.kubernetes.io/name=ragroute-route"; scale.Status.Selector != want {
			return fmt.Errorf("selector %q, want %q", scale.Status.Selector, want)
		}
		return nil
	})
	if scale.Spec.Replicas != 1 {
		t.Errorf("scale replicas %d, want the route's 1", scale.Spec.Replicas)
	}

	scale.Spec.Replicas = 3
	err := s.client.SubResource("scale").Update(ctx, route, client.WithSubResourceBody(scale))
	if err == nil || !strings.Contains(err.Error(), "redis") {
		t.Errorf("scaling a memory-turns route to 3: %v, want the schema's Redis rule", err)
	}

	if err := s.client.SubResource("scale").Get(ctx, route, scale); err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 0
	if err := s.client.SubResource("scale").Update(ctx, route, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scale to 0: %v", err)
	}
	eventually(t, waitFor, "the Deployment scaled to 0", func() error {
		d := s.deployment(t, ns, "support")
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
			return fmt.Errorf("deployment replicas %v", d.Spec.Replicas)
		}
		return nil
	})
}

// A route's disruption budget and autoscaler are children like the
// others: applied when asked for, deleted when no longer, and the
// Deployment leaves its replicas to the autoscaler; pod settings reach
// the pods.
func TestRouteDisruptionBudgetAutoscalerAndPodSettings(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	ctx := context.Background()
	route := s.routeWorld(t, ns)
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonNoReadyReplicas)

	if err := s.client.Create(ctx, newSecret(ns, "redis", "sealKey", strings.Repeat("k", 32))); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, "spec with budget, autoscaler and pod settings", func() error {
		current := &v1alpha1.QueryRoute{}
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(route), current); err != nil {
			return err
		}
		current.Spec.Turns = &v1alpha1.TurnSettings{Backend: v1alpha1.BackendRedis}
		current.Spec.Redis = &v1alpha1.RedisConnection{Address: "redis:6379", SealKeySecretRef: v1alpha1.SecretKeyRef{Name: "redis", Key: "sealKey"}}
		current.Spec.DisruptionBudget = &v1alpha1.RouteDisruptionBudget{MinAvailable: ptr.To(intstr.FromInt32(1))}
		current.Spec.Autoscaling = &v1alpha1.RouteAutoscaling{MinReplicas: 2, MaxReplicas: 6, TargetCPUUtilizationPercentage: ptr.To[int32](60)}
		current.Spec.Pod = &v1alpha1.RoutePodSettings{NodeSelector: map[string]string{"pool": "rag"}, PriorityClassName: "system-cluster-critical",
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
		return s.client.Update(ctx, current)
	})
	eventually(t, waitFor, "the budget, the autoscaler and the pod settings", func() error {
		pdb := &policyv1.PodDisruptionBudget{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support"}, pdb); err != nil {
			return err
		}
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support"}, hpa); err != nil {
			return err
		}
		if hpa.Spec.ScaleTargetRef.Name != "support" || hpa.Spec.MaxReplicas != 6 || pdb.Spec.MinAvailable.IntValue() != 1 {
			return fmt.Errorf("hpa %+v, pdb %+v", hpa.Spec, pdb.Spec)
		}
		d := s.deployment(t, ns, "support")
		if spec := d.Spec.Template.Spec; spec.NodeSelector["pool"] != "rag" || spec.PriorityClassName != "system-cluster-critical" || len(spec.Tolerations) != 1 {
			return fmt.Errorf("pod spec %+v", spec)
		}
		if env := d.Spec.Template.Spec.Containers[0].Env; !hasSecretEnv(env, podconfig.EnvRedisSealKey, "redis", "sealKey") {
			return fmt.Errorf("the route's seal key is not in its pod's environment: %+v", env)
		}
		return nil
	})
	// The operator no longer owns the Deployment's replicas: what the
	// autoscaler writes stays.
	d := s.deployment(t, ns, "support")
	d.Spec.Replicas = ptr.To[int32](4)
	if err := s.client.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, "a pod annotation added", func() error {
		current := &v1alpha1.QueryRoute{}
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(route), current); err != nil {
			return err
		}
		current.Spec.Pod.Annotations = map[string]string{"team": "support"}
		return s.client.Update(ctx, current)
	})
	eventually(t, waitFor, "the annotation applied, the autoscaler's replicas kept", func() error {
		d := s.deployment(t, ns, "support")
		if d.Spec.Template.Annotations["team"] != "support" {
			return errors.New("annotation not applied yet")
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 4 {
			return fmt.Errorf("replicas %v after the apply, want the autoscaler's 4", d.Spec.Replicas)
		}
		return nil
	})

	eventually(t, waitFor, "spec without budget and autoscaler", func() error {
		current := &v1alpha1.QueryRoute{}
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(route), current); err != nil {
			return err
		}
		current.Spec.DisruptionBudget, current.Spec.Autoscaling = nil, nil
		return s.client.Update(ctx, current)
	})
	eventually(t, waitFor, "the budget and the autoscaler deleted", func() error {
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support"}, &policyv1.PodDisruptionBudget{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("pdb: %v", err)
		}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support"}, &autoscalingv2.HorizontalPodAutoscaler{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("hpa: %v", err)
		}
		if got := s.deployment(t, ns, "support").Spec.Replicas; got == nil || *got != 1 {
			return fmt.Errorf("replicas %v, want the route's 1 again", got)
		}
		return nil
	})
}
