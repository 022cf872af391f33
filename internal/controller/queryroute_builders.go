package controller

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

const (
	// configHashAnnotation on the pod template rolls the pods whenever the
	// effective configuration changes.
	configHashAnnotation = "ragroute.io/config-hash"
	routeLabel           = "ragroute.io/route"
	configMountPath      = "/etc/ragroute"
	servingContainer     = "serve"
)

// routeConfigMapName names the ConfigMap holding a route's config; the
// Deployment and Service carry the route's own name.
func routeConfigMapName(route *v1alpha1.QueryRoute) string { return route.Name + "-route" }

// routeEndpoint is the in-cluster URL of a route's query API.
func routeEndpoint(route *v1alpha1.QueryRoute) string {
	return fmt.Sprintf("http://%s.%s.svc:%d", route.Name, route.Namespace, routePort)
}

func routeSelector(route *v1alpha1.QueryRoute) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "ragroute-route",
		"app.kubernetes.io/instance": route.Name,
	}
}

func routeLabels(route *v1alpha1.QueryRoute) map[string]string {
	labels := routeSelector(route)
	labels[managedByLabel] = managedByValue
	labels["app.kubernetes.io/component"] = "query-route"
	labels[routeLabel] = route.Name
	return labels
}

// routeOwner makes the route the controlling owner, so deleting the route
// garbage-collects its children.
func routeOwner(route *v1alpha1.QueryRoute) *metav1ac.OwnerReferenceApplyConfiguration {
	return controllerOwner("QueryRoute", route)
}

// buildRouteConfigMap holds the rendered config, and nothing secret.
func buildRouteConfigMap(route *v1alpha1.QueryRoute, configData []byte) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(routeConfigMapName(route), route.Namespace).
		WithLabels(routeLabels(route)).
		WithOwnerReferences(routeOwner(route)).
		WithData(map[string]string{podconfig.RouteFileName: string(configData)})
}

// buildRouteService exposes the query API inside the cluster, and the
// metrics port for a ServiceMonitor.
func buildRouteService(route *v1alpha1.QueryRoute) *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(route.Name, route.Namespace).
		WithLabels(routeLabels(route)).
		WithOwnerReferences(routeOwner(route)).
		WithSpec(corev1ac.ServiceSpec().
			WithType(corev1.ServiceTypeClusterIP).
			WithSelector(routeSelector(route)).
			WithPorts(
				corev1ac.ServicePort().
					WithName(routePortName).
					WithProtocol(corev1.ProtocolTCP).
					WithPort(routePort).
					WithTargetPort(intstr.FromString(routePortName)),
				corev1ac.ServicePort().
					WithName(routeMetricsPortName).
					WithProtocol(corev1.ProtocolTCP).
					WithPort(routeMetricsPort).
					WithTargetPort(intstr.FromString(routeMetricsPortName))))
}

// buildRouteDeployment runs `ragroute serve` on the rendered config. Secrets
// reach the container as environment variables named by the config.
func buildRouteDeployment(route *v1alpha1.QueryRoute, image, configHash string, env []secretUse) *appsv1ac.DeploymentApplyConfiguration {
	replicas := int32(v1alpha1.DefaultReplicas)
	if route.Spec.Replicas != nil {
		replicas = *route.Spec.Replicas
	}
	if route.Spec.Image != "" {
		image = route.Spec.Image
	}

	container := corev1ac.Container().
		WithName(servingContainer).
		WithImage(image).
		WithArgs("serve", "--config="+configMountPath+"/"+podconfig.RouteFileName).
		WithPorts(
			corev1ac.ContainerPort().WithName(routePortName).WithContainerPort(routePort).WithProtocol(corev1.ProtocolTCP),
			corev1ac.ContainerPort().WithName(routeMetricsPortName).WithContainerPort(routeMetricsPort).WithProtocol(corev1.ProtocolTCP)).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName("config").WithMountPath(configMountPath).WithReadOnly(true),
			corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp"),
		).
		WithStartupProbe(httpProbe("/healthz", 30, 2)).
		WithLivenessProbe(httpProbe("/healthz", 3, 10)).
		WithReadinessProbe(httpProbe("/readyz", 3, 5)).
		WithResources(routeResources(route.Spec.Resources)).
		WithSecurityContext(restrictedContainerSecurity()).
		// The pod names its config on every answer (podconfig.ConfigHashHeader).
		WithEnv(corev1ac.EnvVar().WithName(podconfig.EnvConfigHash).WithValueFrom(
			corev1ac.EnvVarSource().WithFieldRef(corev1ac.ObjectFieldSelector().
				WithFieldPath("metadata.annotations['" + configHashAnnotation + "']"))))
	for _, use := range env {
		container.WithEnv(corev1ac.EnvVar().WithName(use.env).WithValueFrom(
			corev1ac.EnvVarSource().WithSecretKeyRef(
				corev1ac.SecretKeySelector().WithName(use.ref.Name).WithKey(use.ref.Key))))
	}

	deployment := appsv1ac.Deployment(route.Name, route.Namespace).
		WithLabels(routeLabels(route)).
		WithOwnerReferences(routeOwner(route)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(routeSelector(route))).
			// Never drop below the wanted replicas: streams in flight finish.
			WithStrategy(appsv1ac.DeploymentStrategy().
				WithType(appsv1.RollingUpdateDeploymentStrategyType).
				WithRollingUpdate(appsv1ac.RollingUpdateDeployment().
					WithMaxUnavailable(intstr.FromInt32(0)).
					WithMaxSurge(intstr.FromInt32(1)))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(routeLabels(route)).
				WithAnnotations(map[string]string{configHashAnnotation: configHash}).
				WithSpec(restrictedPodSpec().
					WithTerminationGracePeriodSeconds(60).
					WithContainers(container).
					WithVolumes(
						corev1ac.Volume().WithName("config").WithConfigMap(
							corev1ac.ConfigMapVolumeSource().WithName(routeConfigMapName(route))),
						corev1ac.Volume().WithName("tmp").WithEmptyDir(
							corev1ac.EmptyDirVolumeSource().WithSizeLimit(resource.MustParse("64Mi"))),
					))))
	// With an autoscaler the replica count is its own: the operator
	// leaves the field alone.
	if route.Spec.Autoscaling == nil {
		deployment.Spec.WithReplicas(replicas)
	}
	withPodSettings(deployment.Spec.Template, route)
	return deployment
}

// httpProbe probes path on the metrics port, where the probes are served.
func httpProbe(path string, failureThreshold, periodSeconds int32) *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().
		WithHTTPGet(corev1ac.HTTPGetAction().WithPath(path).WithPort(intstr.FromString(routeMetricsPortName))).
		WithPeriodSeconds(periodSeconds).
		WithFailureThreshold(failureThreshold).
		WithTimeoutSeconds(2)
}

// routeResources are the admin's resources, or requests that let a route
// schedule on a small node and a memory limit that contains a leak.
func routeResources(r *corev1.ResourceRequirements) *corev1ac.ResourceRequirementsApplyConfiguration {
	if r == nil {
		return corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("100m"),
				corev1.ResourceMemory: resource.MustParse("128Mi"),
			}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")})
	}
	out := corev1ac.ResourceRequirements()
	if r.Requests != nil {
		out.WithRequests(r.Requests)
	}
	if r.Limits != nil {
		out.WithLimits(r.Limits)
	}
	return out
}
