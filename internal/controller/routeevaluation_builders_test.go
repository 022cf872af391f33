package controller

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// goldenEvaluation is a RouteEvaluation with every field a Job reads set.
func goldenEvaluation() *v1alpha1.RouteEvaluation {
	return &v1alpha1.RouteEvaluation{
		ObjectMeta: metav1.ObjectMeta{Name: "support-nightly", Namespace: "acme-rag", UID: "eval-uid"},
		Spec: v1alpha1.RouteEvaluationSpec{
			RouteRef:  v1alpha1.LocalObjectRef{Name: "support"},
			Questions: v1alpha1.ConfigMapKeyRef{Name: "support-questions", Key: "questions.jsonl"},
			Source:    "handbook",
			Identity: v1alpha1.EvaluationIdentity{TrustedProxy: &v1alpha1.EvaluationProxyIdentity{
				User: "eval-bot", Groups: []string{"staff", "engineering"},
				SecretRef: v1alpha1.SecretKeyRef{Name: "proxy", Key: "secret"}}},
			Scope:         v1alpha1.EvaluationScopeBoth,
			MaxConcurrent: 3,
			Timeout:       &metav1.Duration{Duration: 20 * 60e9},
			Calibration:   &v1alpha1.EvaluationCalibration{Alpha: ptr.To(0.1)},
		},
	}
}

func goldenEvaluationRoute() *v1alpha1.QueryRoute {
	route := &v1alpha1.QueryRoute{ObjectMeta: metav1.ObjectMeta{Name: "support", Namespace: "acme-rag"}}
	route.Spec.Auth.TrustedProxy = &v1alpha1.TrustedProxyAuth{UserHeader: "X-User", SecretHeader: "X-Proxy-Secret",
		SecretRef: &v1alpha1.SecretKeyRef{Name: "proxy", Key: "secret"}}
	route.Status.ConfigHash = "5f0e1d2c3b4a"
	return route
}

func TestEvaluationJobBuilderGolden(t *testing.T) {
	run := evaluationRun{evaluation: goldenEvaluation(), route: goldenEvaluationRoute(),
		image: "ragroute/ragroute:v0.1.0", job: evaluationJobName(goldenEvaluation(), "0123456789abcdef")}
	compareGolden(t, "evaluation-job.golden.yaml", toYAML(t, buildEvaluationJob(run)))

	token := goldenEvaluation()
	token.Spec.Identity = v1alpha1.EvaluationIdentity{TokenSecretRef: &v1alpha1.SecretKeyRef{Name: "eval-jwt", Key: "token"}}
	token.Spec.Scope, token.Spec.MaxConcurrent, token.Spec.Timeout = "", 0, nil
	run.evaluation = token
	compareGolden(t, "evaluation-job-token.golden.yaml", toYAML(t, buildEvaluationJob(run)))
}

// A route behind a proxy admits only its peers to its API port: a
// RouteEvaluation's runs of the route's namespace must be admitted too, or
// no run could reach it where NetworkPolicies are enforced. They are when
// the route checks the proxy's shared secret (the runs send it); a route
// that believes any caller admits only the peers its admin named.
func TestRouteAdmitsItsEvaluationRuns(t *testing.T) {
	route := proxiedRoute()
	run := evaluationRun{evaluation: goldenEvaluation(), route: route, image: "img", job: "support-nightly-0123456789"}
	podLabels := buildEvaluationJob(run).Spec.Template.Labels
	admits := func(route *v1alpha1.QueryRoute) bool {
		for _, peer := range buildRouteNetworkPolicy(route).Spec.Ingress[0].From {
			if peer.NamespaceSelector == nil && peer.PodSelector != nil && len(peer.PodSelector.MatchExpressions) == 0 &&
				len(peer.PodSelector.MatchLabels) > 0 && labelsHold(podLabels, peer.PodSelector.MatchLabels) {
				return true
			}
		}
		return false
	}
	if !admits(route) {
		t.Errorf("the route's NetworkPolicy does not admit its evaluation runs' pods (labels %v)", podLabels)
	}
	other := proxiedRoute()
	other.Name = "other"
	if admits(other) {
		t.Error("another route's NetworkPolicy admits this route's evaluation runs")
	}
	route.Spec.Auth.TrustedProxy.SecretRef, route.Spec.Auth.TrustedProxy.InsecureAllowAnyCaller = nil, true
	if admits(route) {
		t.Error("a route that checks no proxy secret admits pods by their labels")
	}
}

// labelsHold reports whether labels hold every pair of want.
func labelsHold(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// The command line names secrets by file only, uses the route's header
// names, the config the run measures, and the defaults for what the spec
// leaves out.
func TestEvaluationArgs(t *testing.T) {
	evaluation := goldenEvaluation()
	args := evaluationArgs(evaluationRun{evaluation: evaluation, route: goldenEvaluationRoute()})
	for _, want := range []string{
		"--route=http://support.acme-rag.svc:8080", "--questions=/etc/ragroute/questions/questions.jsonl",
		"--source=handbook", "--scope=both", "--max-concurrent=3", "--deadline=20m0s",
		"--header=X-User: eval-bot", "--header=X-Forwarded-Groups: staff,engineering",
		"--header-file=X-Proxy-Secret=/var/run/secrets/ragroute/identity/value", "--termination-log=/dev/termination-log",
		"--config-hash=5f0e1d2c3b4a", "--calibration-alpha=0.1",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("args lack %q: %v", want, args)
		}
	}
	evaluation.Spec.Calibration = nil
	if args := evaluationArgs(evaluationRun{evaluation: evaluation, route: goldenEvaluationRoute()}); !slices.Contains(args, "--calibration-alpha=0.05") {
		t.Errorf("no calibration: args lack the default alpha: %v", args)
	}
	evaluation.Spec.Identity.TrustedProxy.Groups = nil
	evaluation.Spec.Scope, evaluation.Spec.MaxConcurrent, evaluation.Spec.Timeout = "", 0, nil
	args = evaluationArgs(evaluationRun{evaluation: evaluation, route: &v1alpha1.QueryRoute{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "n"}}})
	joined := strings.Join(args, " ")
	for _, want := range []string{"--scope=retrieval", "--max-concurrent=2", "--deadline=15m0s", "--header=X-Forwarded-User: eval-bot",
		"--header-file=X-Ragroute-Proxy-Secret="} {
		if !strings.Contains(joined, want) {
			t.Errorf("args lack %q: %v", want, args)
		}
	}
	if strings.Contains(joined, "Groups") {
		t.Errorf("no groups, yet a groups header: %v", args)
	}
	if strings.Contains(joined, "--config-hash") {
		t.Errorf("a route without a config hash, yet --config-hash: %v", args)
	}
	if strings.Contains(joined, "--calibration-alpha") {
		t.Errorf("scope retrieval runs no turns, yet --calibration-alpha: %v", args)
	}
}
