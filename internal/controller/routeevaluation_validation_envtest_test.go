package controller

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// TestAPIServerRefusesBadRouteEvaluations: the CRD's schema and CEL rules
// refuse an evaluation that cannot run, naming the field.
func TestAPIServerRefusesBadRouteEvaluations(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	evaluation := func(identity, extra string) string {
		return `
apiVersion: ragroute.io/v1alpha1
kind: RouteEvaluation
metadata: {name: support-nightly}
spec:
  routeRef: {name: support}
  questions: {name: questions, key: questions.jsonl}
  source: handbook
  identity: ` + identity + "\n" + extra
	}
	proxy := "{trustedProxy: {user: eval-bot, groups: [staff], secretRef: {name: proxy, key: secret}}}"
	cases := []struct{ name, yaml, want string }{
		{"never runs", evaluation(proxy, ""), "set schedule, onChange: true or both"},
		{"two identities", evaluation("{trustedProxy: {user: u, secretRef: {name: p, key: s}}, tokenSecretRef: {name: t, key: token}}", "  onChange: true\n"),
			"set exactly one of trustedProxy or tokenSecretRef"},
		{"no identity", evaluation("{}", "  onChange: true\n"), "set exactly one of trustedProxy or tokenSecretRef"},
		{"grounded gate in scope retrieval", evaluation(proxy, "  onChange: true\n  thresholds: {minGroundedRatio: 0.8}\n"),
			"thresholds.minGroundedRatio needs scope answers or both"},
		{"recall gate in scope answers", evaluation(proxy, "  onChange: true\n  scope: answers\n  thresholds: {minRecallAt5: 0.8}\n"),
			"minRecallAt5 and minNDCG10 need scope retrieval or both"},
		{"threshold above 1", evaluation(proxy, "  onChange: true\n  thresholds: {minRecallAt5: 1.5}\n"), "spec.thresholds.minRecallAt5"},
		{"timeout too long", evaluation(proxy, "  onChange: true\n  timeout: 12h\n"), "timeout must be between 1m and 6h"},
		{"unknown scope", evaluation(proxy, "  onChange: true\n  scope: everything\n"), `supported values: "retrieval", "answers", "both"`},
		{"calibration in scope retrieval", evaluation(proxy, "  onChange: true\n  calibration: {alpha: 0.1}\n"),
			"calibration needs scope answers or both"},
		{"calibration alpha of a half", evaluation(proxy, "  onChange: true\n  scope: answers\n  calibration: {alpha: 0.5}\n"),
			"spec.calibration.alpha: Invalid value: 0.5: spec.calibration.alpha in body should be less than 0.5"},
		{"calibration alpha of none", evaluation(proxy, "  onChange: true\n  scope: answers\n  calibration: {alpha: 0}\n"),
			"spec.calibration.alpha in body should be greater than 0"},
		{"long name", strings.Replace(evaluation(proxy, "  onChange: true\n"), "support-nightly", strings.Repeat("e", 49), 1),
			"metadata.name must be at most 48 characters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.yaml), &obj.Object); err != nil {
				t.Fatalf("test YAML: %v", err)
			}
			obj.SetNamespace(ns)
			err := s.client.Create(context.Background(), obj)
			if err == nil {
				t.Fatalf("API server accepted %s", tc.name)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not mention %q:\n%v", tc.want, err)
			}
		})
	}
	ok := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(evaluation(proxy, "  schedule: \"0 6 * * *\"\n  scope: both\n  thresholds: {minRecallAt5: 0.8, minGroundedRatio: 0.7}\n  calibration: {}\n")), &ok.Object); err != nil {
		t.Fatal(err)
	}
	ok.SetNamespace(ns)
	if err := s.client.Create(context.Background(), ok); err != nil {
		t.Fatalf("a valid evaluation was refused: %v", err)
	}
	if alpha, _, _ := unstructured.NestedFloat64(ok.Object, "spec", "calibration", "alpha"); alpha != v1alpha1.DefaultEvaluationCalibrationAlpha {
		t.Errorf("spec.calibration.alpha defaults to %g, want %g", alpha, v1alpha1.DefaultEvaluationCalibrationAlpha)
	}
}
