// Package chart checks the Helm chart: it renders, it installs the same
// CRDs and RBAC rules as config/, and its switches do what they say.
package chart

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const chartDir = "../../charts/ragroute"

// helmTemplate renders the chart with extra --set flags.
func helmTemplate(t *testing.T, sets ...string) []*unstructured.Unstructured {
	t.Helper()
	helm := os.Getenv("RAGROUTE_HELM")
	if helm == "" {
		t.Fatal("RAGROUTE_HELM is unset: run `make test`, which installs Helm under bin/")
	}
	args := []string{"template", "rr", chartDir, "--namespace", "ragroute-system"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	return decodeAll(t, &stdout)
}

func decodeAll(t *testing.T, r io.Reader) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("decode rendered YAML: %v", err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func readYAML(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

func TestChartCRDsEqualConfigCRDs(t *testing.T) {
	rendered := map[string]*unstructured.Unstructured{}
	for _, crd := range ofKind(helmTemplate(t), "CustomResourceDefinition") {
		if crd.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s lacks the keep policy", crd.GetName())
		}
		annotations := crd.GetAnnotations()
		delete(annotations, "helm.sh/resource-policy")
		crd.SetAnnotations(annotations)
		rendered[crd.GetName()] = crd
	}
	paths, _ := filepath.Glob("../../config/crd/bases/*.yaml")
	if len(paths) != 3 || len(rendered) != len(paths) {
		t.Fatalf("config has %d CRDs, the chart renders %d", len(paths), len(rendered))
	}
	for _, path := range paths {
		want := readYAML(t, path)
		got, ok := rendered[want.GetName()]
		if !ok {
			t.Errorf("chart lacks CRD %s", want.GetName())
			continue
		}
		if !reflect.DeepEqual(got.Object, want.Object) {
			t.Errorf("chart CRD %s differs from %s: run make manifests", want.GetName(), path)
		}
	}
}

func TestChartSwitches(t *testing.T) {
	if crds := ofKind(helmTemplate(t, "crds.install=false"), "CustomResourceDefinition"); len(crds) != 0 {
		t.Errorf("crds.install=false still renders %d CRDs", len(crds))
	}
	for _, crd := range ofKind(helmTemplate(t, "crds.keep=false"), "CustomResourceDefinition") {
		if _, ok := crd.GetAnnotations()["helm.sh/resource-policy"]; ok {
			t.Errorf("crds.keep=false still keeps %s", crd.GetName())
		}
	}
	objs := helmTemplate(t, "metrics.enabled=false", "image.tag=v9.9.9")
	if svcs := ofKind(objs, "Service"); len(svcs) != 0 {
		t.Errorf("metrics.enabled=false still renders a metrics Service")
	}
	args := managerArgs(t, objs)
	if !strings.Contains(args, "--route-image=ragroute/ragroute:v9.9.9") || strings.Contains(args, "--metrics-bind-address") {
		t.Errorf("manager args %s", args)
	}

	// No allow-list by default: only the route image runs.
	if args := managerArgs(t, helmTemplate(t)); strings.Contains(args, "--allowed-image-prefixes") {
		t.Errorf("default manager args allow images: %s", args)
	}
	// A prefix ending in ":" must survive YAML as a string.
	args = managerArgs(t, helmTemplate(t, "allowedImagePrefixes={ghcr.io/acme/,registry.acme.com/ragroute:}"))
	if !strings.Contains(args, "--allowed-image-prefixes=ghcr.io/acme/,registry.acme.com/ragroute:") {
		t.Errorf("allowedImagePrefixes does not reach the manager: %s", args)
	}
}

// TestChartUserRoles: people who may edit Deployments in a namespace (the
// built-in admin and edit roles) may edit ragroute resources there, viewers
// may read them, and the aggregation can be switched off.
func TestChartUserRoles(t *testing.T) {
	roles := map[string]*unstructured.Unstructured{}
	for _, role := range ofKind(helmTemplate(t), "ClusterRole") {
		roles[role.GetName()] = role
	}
	kinds := []string{"queryroutes", "knowledgestores", "platformprompts"}
	edit, view := roles["rr-ragroute-edit"], roles["rr-ragroute-view"]
	if edit == nil || view == nil {
		t.Fatalf("no rr-ragroute-edit or rr-ragroute-view ClusterRole (%d ClusterRoles)", len(roles))
	}
	for role, want := range map[*unstructured.Unstructured][]string{
		edit: {"rbac.authorization.k8s.io/aggregate-to-admin", "rbac.authorization.k8s.io/aggregate-to-edit"},
		view: {"rbac.authorization.k8s.io/aggregate-to-view"},
	} {
		labels := role.GetLabels()
		for _, label := range want {
			if labels[label] != "true" {
				t.Errorf("%s lacks %s: %v", role.GetName(), label, labels)
			}
		}
		if role == view && (labels["rbac.authorization.k8s.io/aggregate-to-edit"] != "" || labels["rbac.authorization.k8s.io/aggregate-to-admin"] != "") {
			t.Errorf("the view role is aggregated to edit or admin: %v", labels)
		}
	}
	for _, kind := range kinds {
		for _, verb := range []string{"create", "update", "patch", "delete", "get", "list", "watch"} {
			if !grants(t, edit, kind, verb) {
				t.Errorf("%s cannot %s %s", edit.GetName(), verb, kind)
			}
		}
		for _, verb := range []string{"get", "list", "watch"} {
			if !grants(t, view, kind, verb) || !grants(t, view, kind+"/status", verb) || !grants(t, edit, kind+"/status", verb) {
				t.Errorf("%s or %s cannot %s %s or its status", view.GetName(), edit.GetName(), verb, kind)
			}
		}
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			if grants(t, view, kind, verb) || grants(t, edit, kind+"/status", verb) {
				t.Errorf("a user role may %s %s (or its status)", verb, kind)
			}
		}
	}

	for _, role := range ofKind(helmTemplate(t, "userRoles.aggregate=false"), "ClusterRole") {
		for label := range role.GetLabels() {
			if strings.HasPrefix(label, "rbac.authorization.k8s.io/aggregate-to-") {
				t.Errorf("userRoles.aggregate=false still aggregates %s (%s)", role.GetName(), label)
			}
		}
	}
}

// grants reports whether one of role's rules allows verb on ragroute.io's
// resource.
func grants(t *testing.T, role *unstructured.Unstructured, resource, verb string) bool {
	t.Helper()
	rules, _, err := unstructured.NestedSlice(role.Object, "rules")
	if err != nil {
		t.Fatalf("%s rules: %v", role.GetName(), err)
	}
	for _, r := range rules {
		rule := r.(map[string]any)
		groups, _, _ := unstructured.NestedStringSlice(rule, "apiGroups")
		resources, _, _ := unstructured.NestedStringSlice(rule, "resources")
		verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
		if slices.Contains(groups, "ragroute.io") && slices.Contains(resources, resource) && slices.Contains(verbs, verb) {
			return true
		}
	}
	return false
}

func TestChartInstallsTheOperator(t *testing.T) {
	objs := helmTemplate(t)
	for kind, n := range map[string]int{"Deployment": 1, "ServiceAccount": 1, "Service": 1, "ClusterRole": 5, "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1} {
		if got := len(ofKind(objs, kind)); got != n {
			t.Errorf("%d %s, want %d", got, kind, n)
		}
	}
	args := managerArgs(t, objs)
	if !strings.HasPrefix(args, "manager ") || !strings.Contains(args, "--leader-elect=true") {
		t.Errorf("manager args %s", args)
	}

	want := readYAML(t, "../../config/rbac/role.yaml").Object["rules"]
	for _, role := range ofKind(objs, "ClusterRole") {
		if strings.HasSuffix(role.GetName(), "-manager") && !reflect.DeepEqual(role.Object["rules"], want) {
			t.Errorf("chart manager rules differ from config/rbac/role.yaml: run make manifests")
		}
	}
}

// TestChartNamespaceScoped: with watchNamespaces the manager is told which
// namespaces to watch and gets its rules from a Role and RoleBinding in
// each of them, bound to its ServiceAccount, and from no ClusterRole.
func TestChartNamespaceScoped(t *testing.T) {
	if args := managerArgs(t, helmTemplate(t)); strings.Contains(args, "--watch-namespaces") {
		t.Errorf("default manager args restrict namespaces: %s", args)
	}
	objs := helmTemplate(t, "watchNamespaces={team-a,team-b,team-a}")
	if args := managerArgs(t, objs); !slices.Contains(strings.Fields(args), "--watch-namespaces=team-a,team-b") {
		t.Errorf("watchNamespaces does not reach the manager: %s", args)
	}
	want := readYAML(t, "../../config/rbac/role.yaml").Object["rules"]
	roles := map[string]bool{}
	for _, role := range ofKind(objs, "Role") {
		if !strings.HasSuffix(role.GetName(), "-manager") {
			continue
		}
		roles[role.GetNamespace()] = true
		if !reflect.DeepEqual(role.Object["rules"], want) {
			t.Errorf("Role %s/%s rules differ from config/rbac/role.yaml", role.GetNamespace(), role.GetName())
		}
	}
	bindings := map[string]bool{}
	for _, b := range ofKind(objs, "RoleBinding") {
		if !strings.HasSuffix(b.GetName(), "-manager") {
			continue
		}
		bindings[b.GetNamespace()] = true
		ref, _, _ := unstructured.NestedString(b.Object, "roleRef", "kind")
		subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		if ref != "Role" || len(subjects) != 1 || subjects[0].(map[string]any)["namespace"] != "ragroute-system" ||
			subjects[0].(map[string]any)["name"] != "rr-ragroute" {
			t.Errorf("RoleBinding %s/%s: roleRef %s, subjects %v", b.GetNamespace(), b.GetName(), ref, subjects)
		}
	}
	for _, got := range []map[string]bool{roles, bindings} {
		if !reflect.DeepEqual(got, map[string]bool{"team-a": true, "team-b": true}) {
			t.Errorf("manager Roles or RoleBindings in %v, want team-a and team-b", got)
		}
	}
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding"} {
		for _, o := range ofKind(objs, kind) {
			if strings.HasSuffix(o.GetName(), "-manager") {
				t.Errorf("namespace-scoped install still renders %s %s", kind, o.GetName())
			}
		}
	}
	// The leader-election Role stays in the operator's own namespace.
	for _, role := range ofKind(objs, "Role") {
		if strings.HasSuffix(role.GetName(), "-leader-election") && role.GetNamespace() != "ragroute-system" {
			t.Errorf("leader-election Role in %s", role.GetNamespace())
		}
	}
	if n := len(ofKind(objs, "ClusterRoleBinding")); n != 1 {
		t.Errorf("%d ClusterRoleBindings, want only metrics-auth", n)
	}
}

func managerArgs(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	deployments := ofKind(objs, "Deployment")
	if len(deployments) != 1 {
		t.Fatalf("%d Deployments", len(deployments))
	}
	containers, _, _ := unstructured.NestedSlice(deployments[0].Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	return strings.Join(args, " ")
}

func TestChartLints(t *testing.T) {
	helm := os.Getenv("RAGROUTE_HELM")
	if helm == "" {
		t.Fatal("RAGROUTE_HELM is unset: run `make test`")
	}
	for _, sets := range [][]string{nil, {"--set", "watchNamespaces={team-a,team-b}"}} {
		out, err := exec.Command(helm, append([]string{"lint", "--strict", chartDir}, sets...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("helm lint --strict %v: %v\n%s", sets, err, out)
		}
	}
}
