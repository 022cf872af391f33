// Package chart checks the Helm chart: it renders, it installs the same
// CRDs and RBAC rules as config/, its switches do what they say, its schema
// refuses bad values, and a real kube-apiserver accepts what it renders.
package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/testenv/kubebed"
)

const chartDir = "../../charts/ragroute"

// helmTemplate renders the chart with extra --set flags: the release's
// objects, without the `helm test` hooks.
func helmTemplate(t *testing.T, sets ...string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, o := range helmRender(t, sets...) {
		if o.GetAnnotations()["helm.sh/hook"] == "" {
			objs = append(objs, o)
		}
	}
	return objs
}

// helmRender renders the chart with extra --set flags, hooks included.
func helmRender(t *testing.T, sets ...string) []*unstructured.Unstructured {
	t.Helper()
	stdout, stderr, err := helmTemplateRun(t, sets...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr)
	}
	return decodeAll(t, strings.NewReader(stdout))
}

// helmTemplateRun runs helm template with extra --set flags.
func helmTemplateRun(t *testing.T, sets ...string) (stdout, stderr string, err error) {
	t.Helper()
	args := []string{"template", "rr", chartDir, "--namespace", "ragroute-system"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return runHelm(t, nil, args...)
}

// runHelm runs the Helm binary that RAGROUTE_HELM names, with env added to
// the test's environment.
func runHelm(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	testenv.Integration(t, "Helm")
	helm := os.Getenv("RAGROUTE_HELM")
	if helm == "" {
		t.Fatal("RAGROUTE_HELM is unset: run `make test`, which installs Helm under bin/")
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = append(os.Environ(), env...)
	err = cmd.Run()
	return out.String(), errOut.String(), err
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
	if len(paths) != 4 || len(rendered) != len(paths) {
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
	// Routes that trust any caller are refused unless the admin allows them.
	if args := managerArgs(t, helmTemplate(t)); strings.Contains(args, "--allow-insecure-proxy-auth") {
		t.Errorf("default manager args allow insecure proxy auth: %s", args)
	}
	if args := managerArgs(t, helmTemplate(t, "allowInsecureProxyAuth=true")); !strings.Contains(args, "--allow-insecure-proxy-auth") {
		t.Errorf("allowInsecureProxyAuth does not reach the manager: %s", args)
	}
	// The chart's pull Secrets serve route and ingestion pods too.
	if args := managerArgs(t, helmTemplate(t)); strings.Contains(args, "--image-pull-secrets") {
		t.Errorf("default manager args name pull Secrets: %s", args)
	}
	args = managerArgs(t, helmTemplate(t, "imagePullSecrets[0].name=regcred", "imagePullSecrets[1].name=mirror"))
	if !strings.Contains(args, "--image-pull-secrets=regcred,mirror") {
		t.Errorf("imagePullSecrets do not reach the manager: %s", args)
	}
	// The manager runs under a Go soft memory limit unless it is emptied;
	// extraEnv comes after it.
	if env := managerEnv(t, helmTemplate(t)); env != "GOMEMLIMIT=128MiB" {
		t.Errorf("default manager env %q, want GOMEMLIMIT=128MiB", env)
	}
	if env := managerEnv(t, helmTemplate(t, "goMemLimit=")); env != "" {
		t.Errorf("goMemLimit= still sets %q", env)
	}
	if env := managerEnv(t, helmTemplate(t, "goMemLimit=1GiB", "extraEnv[0].name=A", "extraEnv[0].value=b")); env != "GOMEMLIMIT=1GiB A=b" {
		t.Errorf("goMemLimit with extraEnv: %q", env)
	}
	// An admin who set GOMEMLIMIT through extraEnv keeps theirs, once.
	if env := managerEnv(t, helmTemplate(t, "extraEnv[0].name=GOMEMLIMIT", "extraEnv[0].value=200MiB")); env != "GOMEMLIMIT=200MiB" {
		t.Errorf("manager env with GOMEMLIMIT in extraEnv %q, want GOMEMLIMIT=200MiB alone", env)
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
	kinds := []string{"queryroutes", "knowledgestores", "platformprompts", "routeevaluations"}
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

// managerEnv is the manager container's environment as NAME=value words.
func managerEnv(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	deployments := ofKind(objs, "Deployment")
	if len(deployments) != 1 {
		t.Fatalf("%d Deployments", len(deployments))
	}
	containers, _, _ := unstructured.NestedSlice(deployments[0].Object, "spec", "template", "spec", "containers")
	env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	var words []string
	for _, e := range env {
		v := e.(map[string]any)
		words = append(words, fmt.Sprintf("%v=%v", v["name"], v["value"]))
	}
	return strings.Join(words, " ")
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
	testenv.Integration(t, "Helm")
	helm := os.Getenv("RAGROUTE_HELM")
	if helm == "" {
		t.Fatal("RAGROUTE_HELM is unset: run `make test`, which installs Helm under bin/")
	}
	for _, sets := range [][]string{
		nil,
		{"--set", "watchNamespaces={team-a,team-b}"},
		{"--set", "replicaCount=2,serviceMonitor.enabled=true,extraArgs={--zap-devel},extraEnv[0].name=A,extraEnv[0].value=b,priorityClassName=high,nameOverride=rag"},
	} {
		out, err := exec.Command(helm, append([]string{"lint", "--strict", chartDir}, sets...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("helm lint --strict %v: %v\n%s", sets, err, out)
		}
	}
}

// TestChartSchemaRefusesBadValues: values.schema.json refuses typos and
// wrong types, and leaves the free-form maps open.
func TestChartSchemaRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want string // in Helm's error
	}{
		{"replicaCount=abc", "/replicaCount"},
		{"replicaCount=-1", "/replicaCount"},
		{"replcaCount=2", "'replcaCount' not allowed"},
		{"image.tga=v1", "'tga' not allowed"},
		{"metrics.port=70000", "/metrics/port"},
		{"metrics.secure=yes", "/metrics/secure"},
		{"extraArgs=--zap-devel", "/extraArgs"},
		{"extraEnv[0].value=x", "/extraEnv/0"},
		{"extraEnv[0].name=A,extraEnv[0].valu=x", "/extraEnv/0"},
		{"podDisruptionBudget.minAvailable=half", "/podDisruptionBudget/minAvailable"},
		{"serviceMonitor.interval=30", "/serviceMonitor/interval"},
		{"serviceMonitor.enable=true", "'enable' not allowed"},
		{"logLevel=verbose", "/logLevel"},
		{"watchNamespaces={Team_A}", "/watchNamespaces/0"},
		{"milvusProbe.timeout=5", "/milvusProbe/timeout"},
		{"topologySpreadConstraints[0].maxSkew=1", "/topologySpreadConstraints/0"},
		{"tests.image.tag=", "/tests/image/tag"},
		{"priorityClassName=1", "/priorityClassName"},
		{"goMemLimit=lots", "/goMemLimit"},
	} {
		_, stderr, err := helmTemplateRun(t, tc.set)
		if err == nil {
			t.Errorf("--set %s renders; the schema should refuse it", tc.set)
			continue
		}
		if !strings.Contains(stderr, "schema") || !strings.Contains(stderr, tc.want) {
			t.Errorf("--set %s: error does not name %q:\n%s", tc.set, tc.want, stderr)
		}
	}
	// Free-form maps and lists stay open.
	helmTemplate(t, "podAnnotations.a/b=c", "podLabels.team=x", "nodeSelector.disk=ssd",
		"resources.limits.cpu=1", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=k",
		"tolerations[0].key=k", "tolerations[0].operator=Exists", "podSecurityContext.runAsUser=1000",
		"serviceMonitor.tlsConfig.serverName=x", "serviceAccount.annotations.a=b", "global.anything=1",
		"podDisruptionBudget.minAvailable=50%", "logLevel=2")
}

// TestChartOptionalTemplates: every optional object renders only when asked
// for, and every value reaches the manager's Deployment.
func TestChartOptionalTemplates(t *testing.T) {
	// PodDisruptionBudget: only with more than one replica.
	if pdbs := ofKind(helmTemplate(t), "PodDisruptionBudget"); len(pdbs) != 0 {
		t.Errorf("one replica renders %d PodDisruptionBudgets", len(pdbs))
	}
	if pdbs := ofKind(helmTemplate(t, "replicaCount=2", "podDisruptionBudget.enabled=false"), "PodDisruptionBudget"); len(pdbs) != 0 {
		t.Errorf("podDisruptionBudget.enabled=false renders %d PodDisruptionBudgets", len(pdbs))
	}
	objs := helmTemplate(t, "replicaCount=3")
	pdbs := ofKind(objs, "PodDisruptionBudget")
	if len(pdbs) != 1 {
		t.Fatalf("replicaCount=3 renders %d PodDisruptionBudgets", len(pdbs))
	}
	minAvailable, _, _ := unstructured.NestedFieldNoCopy(pdbs[0].Object, "spec", "minAvailable")
	pdbSelector, _, _ := unstructured.NestedStringMap(pdbs[0].Object, "spec", "selector", "matchLabels")
	if fmt.Sprint(minAvailable) != "1" || !reflect.DeepEqual(pdbSelector, podLabels(t, objs)) {
		t.Errorf("PodDisruptionBudget minAvailable %v, selector %v; pod labels %v", minAvailable, pdbSelector, podLabels(t, objs))
	}
	if pdbs := ofKind(helmTemplate(t, "replicaCount=3", "podDisruptionBudget.minAvailable=50%"), "PodDisruptionBudget"); len(pdbs) != 1 || pdbs[0].Object["spec"].(map[string]any)["minAvailable"] != "50%" {
		t.Errorf("podDisruptionBudget.minAvailable=50%% does not reach the PodDisruptionBudget")
	}

	// ServiceMonitor: only when enabled, and scraping the metrics Service the
	// way the manager serves it.
	if sms := ofKind(helmTemplate(t), "ServiceMonitor"); len(sms) != 0 {
		t.Errorf("serviceMonitor.enabled=false renders %d ServiceMonitors", len(sms))
	}
	if sms := ofKind(helmTemplate(t, "serviceMonitor.enabled=true", "metrics.enabled=false"), "ServiceMonitor"); len(sms) != 0 {
		t.Errorf("metrics.enabled=false still renders %d ServiceMonitors", len(sms))
	}
	for _, secure := range []bool{true, false} {
		objs := helmTemplate(t, "serviceMonitor.enabled=true", "serviceMonitor.interval=15s",
			"serviceMonitor.labels.release=prometheus", fmt.Sprintf("metrics.secure=%t", secure))
		sms, svcs := ofKind(objs, "ServiceMonitor"), ofKind(objs, "Service")
		if len(sms) != 1 || len(svcs) != 1 {
			t.Fatalf("metrics.secure=%t: %d ServiceMonitors, %d Services", secure, len(sms), len(svcs))
		}
		sm, svc := sms[0], svcs[0]
		if sm.GetAPIVersion() != "monitoring.coreos.com/v1" || sm.GetLabels()["release"] != "prometheus" || sm.GetNamespace() != "ragroute-system" {
			t.Errorf("ServiceMonitor %s %s/%s, labels %v", sm.GetAPIVersion(), sm.GetNamespace(), sm.GetName(), sm.GetLabels())
		}
		selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		for k, v := range selector {
			if svc.GetLabels()[k] != v {
				t.Errorf("ServiceMonitor selector %v does not select the metrics Service (labels %v)", selector, svc.GetLabels())
			}
		}
		namespaces, _, _ := unstructured.NestedStringSlice(sm.Object, "spec", "namespaceSelector", "matchNames")
		if !reflect.DeepEqual(namespaces, []string{"ragroute-system"}) {
			t.Errorf("ServiceMonitor namespaceSelector %v", namespaces)
		}
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		if len(endpoints) != 1 || len(ports) != 1 {
			t.Fatalf("%d ServiceMonitor endpoints, %d Service ports", len(endpoints), len(ports))
		}
		ep, port := endpoints[0].(map[string]any), ports[0].(map[string]any)
		scheme := map[bool]string{true: "https", false: "http"}[secure]
		if ep["port"] != port["name"] || ep["scheme"] != scheme || ep["path"] != "/metrics" || ep["interval"] != "15s" {
			t.Errorf("metrics.secure=%t: endpoint %v, Service port %v", secure, ep, port)
		}
		skip, _, _ := unstructured.NestedBool(ep, "tlsConfig", "insecureSkipVerify")
		if secure != (ep["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token") || secure != skip {
			t.Errorf("metrics.secure=%t: endpoint %v (token and TLS settings must follow metrics.secure)", secure, ep)
		}
	}

	// The routes' ServiceMonitor selects every route's Service (the labels
	// the operator puts on it) in the watched namespaces.
	for _, tc := range []struct {
		sets       []string
		namespaces string
	}{
		{[]string{"serviceMonitor.routes.enabled=true"}, "map[any:true]"},
		{[]string{"serviceMonitor.routes.enabled=true", "watchNamespaces={team-a,team-b}"}, "map[matchNames:[team-a team-b]]"},
	} {
		var routes *unstructured.Unstructured
		for _, sm := range ofKind(helmTemplate(t, tc.sets...), "ServiceMonitor") {
			if strings.HasSuffix(sm.GetName(), "-routes") {
				routes = sm
			}
		}
		if routes == nil {
			t.Fatalf("%v: no routes ServiceMonitor", tc.sets)
		}
		selector, _, _ := unstructured.NestedStringMap(routes.Object, "spec", "selector", "matchLabels")
		namespaces, _, _ := unstructured.NestedMap(routes.Object, "spec", "namespaceSelector")
		endpoints, _, _ := unstructured.NestedSlice(routes.Object, "spec", "endpoints")
		if selector["app.kubernetes.io/name"] != "ragroute-route" || selector["app.kubernetes.io/managed-by"] != "ragroute" ||
			fmt.Sprint(namespaces) != tc.namespaces || len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "metrics" {
			t.Errorf("%v: routes ServiceMonitor selector %v, namespaces %v, endpoints %v", tc.sets, selector, namespaces, endpoints)
		}
	}

	// The manager's container and pod.
	objs = helmTemplate(t,
		"extraArgs={--zap-devel,--zap-stacktrace-level=error}", "goMemLimit=",
		"extraEnv[0].name=GOMEMLIMIT", "extraEnv[0].value=200MiB",
		"extraEnv[1].name=POD_NAME", "extraEnv[1].valueFrom.fieldRef.fieldPath=metadata.name",
		"topologySpreadConstraints[0].maxSkew=1", "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
		"topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
		"topologySpreadConstraints[1].maxSkew=2", "topologySpreadConstraints[1].topologyKey=kubernetes.io/hostname",
		"topologySpreadConstraints[1].whenUnsatisfiable=DoNotSchedule", "topologySpreadConstraints[1].labelSelector.matchLabels.own=yes",
		"priorityClassName=system-cluster-critical",
		"podAnnotations.example\\.com/a=yes", "podLabels.team=search",
		"nodeSelector.disk=ssd", "tolerations[0].key=dedicated", "tolerations[0].operator=Exists",
		"affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1",
		"affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey=kubernetes.io/hostname",
	)
	args := strings.Fields(managerArgs(t, objs))
	if !slices.Equal(args[len(args)-2:], []string{"--zap-devel", "--zap-stacktrace-level=error"}) {
		t.Errorf("extraArgs are not appended to the manager's args: %v", args)
	}
	pod := podSpec(t, objs)
	container := pod["containers"].([]any)[0].(map[string]any)
	env, _ := yaml.Marshal(container["env"])
	if want := "- name: GOMEMLIMIT\n  value: 200MiB\n- name: POD_NAME\n  valueFrom:\n    fieldRef:\n      fieldPath: metadata.name\n"; string(env) != want {
		t.Errorf("manager env:\n%s\nwant:\n%s", env, want)
	}
	if pod["priorityClassName"] != "system-cluster-critical" {
		t.Errorf("priorityClassName %v", pod["priorityClassName"])
	}
	spread, _, _ := unstructured.NestedSlice(pod, "topologySpreadConstraints")
	if len(spread) != 2 {
		t.Fatalf("%d topologySpreadConstraints", len(spread))
	}
	first, _, _ := unstructured.NestedStringMap(spread[0].(map[string]any), "labelSelector", "matchLabels")
	if !reflect.DeepEqual(first, selectorLabels(t, objs)) || spread[0].(map[string]any)["topologyKey"] != "topology.kubernetes.io/zone" {
		t.Errorf("a constraint without labelSelector should spread the manager's pods: %v", spread[0])
	}
	second, _, _ := unstructured.NestedStringMap(spread[1].(map[string]any), "labelSelector", "matchLabels")
	if second["own"] != "yes" {
		t.Errorf("a constraint's own labelSelector is lost: %v", spread[1])
	}
	annotations, _, _ := unstructured.NestedStringMap(ofKind(objs, "Deployment")[0].Object, "spec", "template", "metadata", "annotations")
	if annotations["example.com/a"] != "yes" || annotations["kubectl.kubernetes.io/default-container"] != "manager" || podLabels(t, objs)["team"] != "search" {
		t.Errorf("podAnnotations %v, podLabels %v", annotations, podLabels(t, objs))
	}
	selector := selectorLabels(t, objs)
	if _, ok := selector["team"]; ok {
		t.Errorf("podLabels leak into the Deployment's selector %v", selector)
	}
	nodeSelector, _, _ := unstructured.NestedStringMap(pod, "nodeSelector")
	tolerations, _, _ := unstructured.NestedSlice(pod, "tolerations")
	_, hasAffinity, _ := unstructured.NestedMap(pod, "affinity", "podAntiAffinity")
	if nodeSelector["disk"] != "ssd" || len(tolerations) != 1 || !hasAffinity {
		t.Errorf("nodeSelector %v, tolerations %v, affinity %v", nodeSelector, tolerations, pod["affinity"])
	}
	// Unset, they leave no trace (goMemLimit is set by default).
	pod = podSpec(t, helmTemplate(t, "goMemLimit="))
	container = pod["containers"].([]any)[0].(map[string]any)
	for _, key := range []string{"priorityClassName", "topologySpreadConstraints", "nodeSelector", "tolerations", "affinity"} {
		if _, ok := pod[key]; ok {
			t.Errorf("default pod spec has %s", key)
		}
	}
	if _, ok := container["env"]; ok {
		t.Errorf("default manager container has env")
	}
}

// TestChartNameOverrides: every object of the release is named by the
// helpers, so nameOverride and fullnameOverride rename all of them, and the
// references between them (bindings, Service selector, ServiceAccount)
// follow.
func TestChartNameOverrides(t *testing.T) {
	for _, tc := range []struct {
		sets       []string
		prefix     string
		appName    string
		saOverride string
	}{
		{nil, "rr-ragroute", "ragroute", ""},
		{[]string{"nameOverride=rag"}, "rr-rag", "rag", ""},
		{[]string{"fullnameOverride=ops"}, "ops", "ragroute", ""},
		{[]string{"fullnameOverride=ops", "nameOverride=rag", "serviceAccount.name=robot"}, "ops", "rag", "robot"},
	} {
		sets := append([]string{"replicaCount=2", "serviceMonitor.enabled=true"}, tc.sets...)
		objs := helmRender(t, sets...)
		names := map[string]bool{}
		for _, o := range objs {
			names[o.GetKind()+"/"+o.GetName()] = true
			if o.GetKind() == "CustomResourceDefinition" {
				continue
			}
			named := o.GetName() == tc.prefix || strings.HasPrefix(o.GetName(), tc.prefix+"-")
			if overridden := o.GetKind() == "ServiceAccount" && o.GetName() == tc.saOverride; !named && !overridden {
				t.Errorf("%v: %s %s is not named after %s", tc.sets, o.GetKind(), o.GetName(), tc.prefix)
			}
			labels := o.GetLabels()
			if labels["app.kubernetes.io/name"] != tc.appName || labels["app.kubernetes.io/instance"] != "rr" {
				t.Errorf("%v: %s %s labels %v", tc.sets, o.GetKind(), o.GetName(), labels)
			}
		}
		// Every reference points at a rendered object.
		for _, o := range objs {
			if ref, ok, _ := unstructured.NestedStringMap(o.Object, "roleRef"); ok && !names[ref["kind"]+"/"+ref["name"]] {
				t.Errorf("%v: %s %s refers to missing %s %s", tc.sets, o.GetKind(), o.GetName(), ref["kind"], ref["name"])
			}
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				s := s.(map[string]any)
				if !names["ServiceAccount/"+s["name"].(string)] {
					t.Errorf("%v: %s %s binds missing ServiceAccount %s", tc.sets, o.GetKind(), o.GetName(), s["name"])
				}
			}
		}
		pod := podSpec(t, objs)
		if sa := pod["serviceAccountName"].(string); !names["ServiceAccount/"+sa] {
			t.Errorf("%v: the manager runs as missing ServiceAccount %s", tc.sets, sa)
		}
		svc := ofKind(objs, "Service")[0]
		svcSelector, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
		if !reflect.DeepEqual(svcSelector, selectorLabels(t, objs)) {
			t.Errorf("%v: metrics Service selects %v, the Deployment %v", tc.sets, svcSelector, selectorLabels(t, objs))
		}
	}
}

// TestChartTestHook: `helm test` runs a pod under the restricted Pod
// Security profile that waits, with kubectl, for the CRDs and the manager's
// Deployment, with just the rights to read them; every object of it is a
// test hook deleted before the next run.
func TestChartTestHook(t *testing.T) {
	objs := helmRender(t, "tests.image.repository=registry.example/kubectl", "tests.image.tag=v1.30.0", "tests.timeout=45s")
	var hooks []*unstructured.Unstructured
	for _, o := range objs {
		if a := o.GetAnnotations(); a["helm.sh/hook"] != "" {
			hooks = append(hooks, o)
			if a["helm.sh/hook"] != "test" || !strings.Contains(a["helm.sh/hook-delete-policy"], "before-hook-creation") {
				t.Errorf("%s %s: hook annotations %v", o.GetKind(), o.GetName(), a)
			}
			if o.GetLabels()["app.kubernetes.io/component"] != "test" {
				t.Errorf("%s %s labels %v", o.GetKind(), o.GetName(), o.GetLabels())
			}
		}
	}
	kinds := map[string]int{}
	for _, h := range hooks {
		kinds[h.GetKind()]++
	}
	if !reflect.DeepEqual(kinds, map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "Pod": 1}) {
		t.Fatalf("test hooks %v", kinds)
	}
	pod := ofKind(hooks, "Pod")[0]
	if pod.GetAnnotations()["helm.sh/hook-weight"] != "0" || ofKind(hooks, "ClusterRole")[0].GetAnnotations()["helm.sh/hook-weight"] != "-1" {
		t.Errorf("the test's RBAC must come before its pod")
	}
	spec := pod.Object["spec"].(map[string]any)
	if spec["restartPolicy"] != "Never" || spec["serviceAccountName"] != ofKind(hooks, "ServiceAccount")[0].GetName() {
		t.Errorf("test pod restartPolicy %v, serviceAccountName %v", spec["restartPolicy"], spec["serviceAccountName"])
	}
	if nonRoot, _, _ := unstructured.NestedBool(spec, "securityContext", "runAsNonRoot"); !nonRoot {
		t.Errorf("test pod may run as root")
	}
	if seccomp, _, _ := unstructured.NestedString(spec, "securityContext", "seccompProfile", "type"); seccomp != "RuntimeDefault" {
		t.Errorf("test pod seccomp %q", seccomp)
	}
	var waits []string
	for _, list := range []string{"initContainers", "containers"} {
		containers, _, _ := unstructured.NestedSlice(spec, list)
		for _, c := range containers {
			c := c.(map[string]any)
			if c["image"] != "registry.example/kubectl:v1.30.0" {
				t.Errorf("test container image %v", c["image"])
			}
			escalation, _, _ := unstructured.NestedBool(c, "securityContext", "allowPrivilegeEscalation")
			drop, _, _ := unstructured.NestedStringSlice(c, "securityContext", "capabilities", "drop")
			if escalation || !slices.Equal(drop, []string{"ALL"}) {
				t.Errorf("test container %s securityContext %v", c["name"], c["securityContext"])
			}
			args, _, _ := unstructured.NestedStringSlice(c, "args")
			waits = append(waits, strings.Join(args, " "))
		}
	}
	want := []string{
		"wait --for=condition=Established --timeout=45s customresourcedefinition/queryroutes.ragroute.io customresourcedefinition/knowledgestores.ragroute.io customresourcedefinition/platformprompts.ragroute.io customresourcedefinition/routeevaluations.ragroute.io",
		"wait --for=condition=Available --timeout=45s --namespace=ragroute-system deployment/rr-ragroute",
	}
	if !slices.Equal(waits, want) {
		t.Errorf("test pod runs\n%q\nwant\n%q", waits, want)
	}
	for _, h := range hooks {
		if h.GetKind() != "ClusterRole" && h.GetKind() != "Role" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(h.Object, "rules")
		for _, r := range rules {
			verbs, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "verbs")
			names, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resourceNames")
			if !slices.Equal(verbs, []string{"get", "list", "watch"}) || len(names) == 0 {
				t.Errorf("%s %s may %v %v: only read the named objects", h.GetKind(), h.GetName(), verbs, names)
			}
		}
	}

	for _, o := range helmRender(t, "tests.enabled=false") {
		if o.GetAnnotations()["helm.sh/hook"] != "" {
			t.Errorf("tests.enabled=false still renders %s %s", o.GetKind(), o.GetName())
		}
	}
}

func podSpec(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	deployments := ofKind(objs, "Deployment")
	if len(deployments) != 1 {
		t.Fatalf("%d Deployments", len(deployments))
	}
	spec, _, _ := unstructured.NestedMap(deployments[0].Object, "spec", "template", "spec")
	return spec
}

func podLabels(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	labels, _, _ := unstructured.NestedStringMap(ofKind(objs, "Deployment")[0].Object, "spec", "template", "metadata", "labels")
	return labels
}

func selectorLabels(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	labels, _, _ := unstructured.NestedStringMap(ofKind(objs, "Deployment")[0].Object, "spec", "selector", "matchLabels")
	return labels
}

// TestChartOnAPIServer: a real kube-apiserver (the envtest bed, with a
// scheduler, a controller manager and kwok nodes) accepts every rendered
// object, test hooks included, under server-side dry-run with strict field
// validation, in namespaces that enforce the restricted Pod Security
// profile and warn about it (any warning fails the test). The Prometheus
// Operator's ServiceMonitor CRD (testdata, v0.80.1) is installed so
// ServiceMonitors are checked against its schema. Then the chart installs
// with `helm install --wait` (the Deployment becomes Available on kwok
// nodes), prints its NOTES, the test pod's kubectl commands succeed with
// the test ServiceAccount's rights, and `helm uninstall` keeps the CRDs.
func TestChartOnAPIServer(t *testing.T) {
	testenv.Integration(t, "the test bed's kube-apiserver and Helm")
	assets := os.Getenv(kubebed.EnvAssets)
	if assets == "" {
		t.Fatal(kubebed.EnvAssets + " is unset: run `make test`, which builds the test bed (hack/testbed.sh)")
	}
	ctrllog.SetLogger(logr.Discard()) // envtest's and the client's logs are not worth reading here
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	bed, err := kubebed.Start(ctx, kubebed.Options{Dir: dir, Nodes: 1})
	if err != nil {
		t.Fatalf("test bed: %v", err)
	}
	t.Cleanup(bed.Stop)
	t.Cleanup(cancel)
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	config, err := bed.WriteKubeconfig(kubeconfig, "chart-admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	warnings := &warningRecorder{}
	config.WarningHandlerWithContext = warnings
	c, err := client.New(config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	serviceMonitorCRD := prepareCluster(ctx, t, c)
	t.Run("dry-run", func(t *testing.T) { dryRunAll(ctx, t, c, warnings) })

	env := []string{"KUBECONFIG=" + kubeconfig, "HELM_CACHE_HOME=" + filepath.Join(dir, "helm", "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(dir, "helm", "config"), "HELM_DATA_HOME=" + filepath.Join(dir, "helm", "data")}
	t.Run("notes", func(t *testing.T) {
		stdout, stderr, err := runHelm(t, env, "install", "other", chartDir, "--namespace", "ragroute-system", "--dry-run=server",
			"--set", "watchNamespaces={team-a,team-b}", "--set", "crds.install=false", "--set", "metrics.secure=false", "--set", "tests.enabled=false")
		if err != nil {
			t.Fatalf("helm install --dry-run=server: %v\n%s", err, stderr)
		}
		notes := notesOf(stdout)
		for _, want := range []string{
			"release other in namespace ragroute-system",
			"Watches only the namespaces team-a, team-b",
			"CRDs: not installed by the chart",
			"port 8443 (HTTP)",
			"kubectl -n ragroute-system get deploy other-ragroute",
			"kubectl get ragroute -A",
			"README.md and docs/operator.md",
		} {
			if !strings.Contains(notes, want) {
				t.Errorf("NOTES lack %q:\n%s", want, notes)
			}
		}
		if strings.Contains(notes, "helm test") || strings.Contains(notes, "ServiceMonitor") {
			t.Errorf("NOTES mention what is not installed:\n%s", notes)
		}
	})

	t.Run("install", func(t *testing.T) {
		sets := []string{"replicaCount=2", "serviceMonitor.enabled=true", "tests.timeout=20s"}
		args := []string{"install", "rr", chartDir, "--namespace", "ragroute-system", "--wait", "--timeout", "3m"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		stdout, stderr, err := runHelm(t, env, args...)
		if err != nil {
			t.Fatalf("helm install: %v\n%s\n%s", err, stdout, stderr)
		}
		notes := notesOf(stdout)
		for _, want := range []string{
			"release rr in namespace ragroute-system",
			"Deployment rr-ragroute (2 replicas",
			"Watches every namespace",
			"were installed with the chart and are kept when it is uninstalled",
			"bind ClusterRole rr-ragroute-metrics-reader",
			"ServiceMonitor rr-ragroute",
			"kubectl -n ragroute-system get deploy rr-ragroute",
			"kubectl get ragroute -A",
			"helm test rr --namespace ragroute-system",
			"README.md and docs/operator.md",
		} {
			if !strings.Contains(notes, want) {
				t.Errorf("NOTES lack %q:\n%s", want, notes)
			}
		}
		for _, o := range helmTemplate(t, sets...) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(o.GroupVersionKind())
			if err := c.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, got); err != nil {
				t.Errorf("after helm install: %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
		if w := warnings.take(); len(w) > 0 {
			t.Errorf("the API server warns:\n%s", strings.Join(w, "\n"))
		}

		// The test hook: its RBAC for real, its pod in dry-run (the restricted
		// profile is enforced), and its kubectl commands as its
		// ServiceAccount (kwok would never run the pod to completion).
		var testPod *unstructured.Unstructured
		var testSA string
		for _, o := range helmRender(t, sets...) {
			if o.GetAnnotations()["helm.sh/hook"] != "test" {
				continue
			}
			switch o.GetKind() {
			case "Pod":
				testPod = o
				if err := c.Create(ctx, o.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict")); err != nil {
					t.Errorf("test pod refused: %v", err)
				}
			default:
				if o.GetKind() == "ServiceAccount" {
					testSA = fmt.Sprintf("system:serviceaccount:%s:%s", o.GetNamespace(), o.GetName())
				}
				if err := c.Create(ctx, o.DeepCopy(), client.FieldValidation("Strict")); err != nil {
					t.Fatalf("test hook %s %s: %v", o.GetKind(), o.GetName(), err)
				}
			}
		}
		if testPod == nil || testSA == "" {
			t.Fatal("no test pod or ServiceAccount rendered")
		}
		kubectl := filepath.Join(assets, "kubectl")
		for _, list := range []string{"initContainers", "containers"} {
			containers, _, _ := unstructured.NestedSlice(testPod.Object, "spec", list)
			for _, ctr := range containers {
				args, _, _ := unstructured.NestedStringSlice(ctr.(map[string]any), "args")
				cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig, "--as", testSA}, args...)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("test container %v: kubectl %s as %s: %v\n%s", ctr.(map[string]any)["name"], strings.Join(args, " "), testSA, err, out)
				}
			}
		}
		// ... and nothing more than that.
		for _, args := range [][]string{
			{"get", "deployments", "--namespace", "ragroute-system"},
			{"get", "secrets", "--namespace", "ragroute-system"},
			{"get", "customresourcedefinition", serviceMonitorCRD.GetName()},
		} {
			cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig, "--as", testSA}, args...)...)
			if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "forbidden") {
				t.Errorf("the test's ServiceAccount may kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}

		if _, stderr, err := runHelm(t, env, "uninstall", "rr", "--namespace", "ragroute-system", "--wait", "--timeout", "2m"); err != nil {
			t.Fatalf("helm uninstall: %v\n%s", err, stderr)
		}
		for _, name := range []string{"queryroutes.ragroute.io", "knowledgestores.ragroute.io", "platformprompts.ragroute.io", "routeevaluations.ragroute.io"} {
			waitEstablished(ctx, t, c, name)
		}
		deployment := &unstructured.Unstructured{}
		deployment.SetAPIVersion("apps/v1")
		deployment.SetKind("Deployment")
		if err := c.Get(ctx, types.NamespacedName{Namespace: "ragroute-system", Name: "rr-ragroute"}, deployment); err == nil {
			t.Errorf("helm uninstall left the Deployment")
		}
	})
}

// TestChartOnKubernetes130: the dry-run of TestChartOnAPIServer against
// kube-apiserver v1.30, the oldest Kubernetes the chart is checked against,
// so nothing it renders needs a newer API. The binary cannot be downloaded
// here: hack/kube-apiserver-1.30.sh builds it from the Go module
// proxy and prints its path for RAGROUTE_KUBE_APISERVER_130; unset, the
// test is skipped.
func TestChartOnKubernetes130(t *testing.T) {
	testenv.Integration(t, "kube-apiserver 1.30 and Helm")
	apiserver := os.Getenv("RAGROUTE_KUBE_APISERVER_130")
	if apiserver == "" {
		t.Skip("RAGROUTE_KUBE_APISERVER_130 is unset: build it with hack/kube-apiserver-1.30.sh")
	}
	assets := os.Getenv(kubebed.EnvAssets)
	if assets == "" {
		t.Fatal(kubebed.EnvAssets + " is unset: run `make test`, which builds the test bed (hack/testbed.sh)")
	}
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// envtest takes etcd from KUBEBUILDER_ASSETS and kube-apiserver from
	// TEST_ASSET_KUBE_APISERVER, which comes first.
	abs, err := filepath.Abs(apiserver)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_ASSET_KUBE_APISERVER", abs)
	env := &envtest.Environment{}
	config, err := env.Start()
	if err != nil {
		t.Fatalf("start etcd and kube-apiserver %s: %v", apiserver, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	version, err := discovery.NewDiscoveryClientForConfigOrDie(config).ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if version.Major != "1" || version.Minor != "30" {
		t.Fatalf("%s is Kubernetes %s, want 1.30", apiserver, version.GitVersion)
	}
	warnings := &warningRecorder{}
	config.WarningHandlerWithContext = warnings
	c, err := client.New(config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	prepareCluster(ctx, t, c)
	dryRunAll(ctx, t, c, warnings)
}

// dryRunSets are the values TestChartOnAPIServer's dry-run renders: the
// defaults, every optional object and value at once, the name overrides,
// a namespace-scoped install, and everything optional off.
var dryRunSets = [][]string{
	nil,
	{"replicaCount=2", "serviceMonitor.enabled=true", "serviceMonitor.routes.enabled=true", "serviceMonitor.interval=30s", "serviceMonitor.scrapeTimeout=10s",
		"serviceMonitor.labels.release=prometheus", "podDisruptionBudget.minAvailable=50%",
		"extraArgs={--zap-devel}", "extraEnv[0].name=GOMEMLIMIT", "extraEnv[0].value=200MiB",
		"extraEnv[1].name=POD_NAME", "extraEnv[1].valueFrom.fieldRef.fieldPath=metadata.name",
		"topologySpreadConstraints[0].maxSkew=1", "topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname",
		"topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway", "priorityClassName=system-cluster-critical",
		"podAnnotations.example\\.com/a=b", "podLabels.team=search", "nodeSelector.disk=ssd",
		"tolerations[0].key=dedicated", "tolerations[0].operator=Exists", "imagePullSecrets[0].name=regcred",
		"affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1",
		"affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey=kubernetes.io/hostname",
		"affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchLabels.app\\.kubernetes\\.io/component=operator",
		"serviceAccount.annotations.example\\.com/role=x"},
	{"nameOverride=rag", "replicaCount=2", "serviceMonitor.enabled=true"},
	{"fullnameOverride=ops", "serviceAccount.name=robot"},
	{"watchNamespaces={team-a,team-b}", "metrics.secure=false", "serviceMonitor.enabled=true", "serviceMonitor.routes.enabled=true", "leaderElection=false"},
	{"crds.install=false", "metrics.enabled=false", "serviceAccount.create=false", "userRoles.aggregate=false", "tests.enabled=false"},
}

// prepareCluster creates the namespaces the chart is rendered for, enforcing
// and warning about the restricted Pod Security profile, and installs the
// ServiceMonitor CRD.
func prepareCluster(ctx context.Context, t *testing.T, c client.Client) *unstructured.Unstructured {
	t.Helper()
	for _, ns := range []string{"ragroute-system", "team-a", "team-b"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted",
			"pod-security.kubernetes.io/warn":    "restricted",
		}}}); err != nil {
			t.Fatal(err)
		}
	}
	serviceMonitorCRD := readYAML(t, "testdata/monitoring.coreos.com_servicemonitors.yaml")
	if err := c.Create(ctx, serviceMonitorCRD); err != nil {
		t.Fatalf("ServiceMonitor CRD: %v", err)
	}
	waitEstablished(ctx, t, c, serviceMonitorCRD.GetName())
	return serviceMonitorCRD
}

// dryRunAll creates every object the chart renders for each of dryRunSets,
// hooks included, in server-side dry-run with strict field validation; a
// refusal or a warning fails the test.
func dryRunAll(ctx context.Context, t *testing.T, c client.Client, warnings *warningRecorder) {
	t.Helper()
	for _, sets := range dryRunSets {
		objs := helmRender(t, sets...)
		for _, o := range objs {
			if err := c.Create(ctx, o.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict")); err != nil {
				t.Errorf("%v: %s %s/%s refused: %v", sets, o.GetKind(), o.GetNamespace(), o.GetName(), err)
			}
		}
		if w := warnings.take(); len(w) > 0 {
			t.Errorf("%v: the API server warns:\n%s", sets, strings.Join(w, "\n"))
		}
		if !slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Deployment" }) {
			t.Errorf("%v: no Deployment rendered", sets)
		}
	}
}

// notesOf returns what Helm prints after NOTES:.
func notesOf(stdout string) string {
	_, notes, _ := strings.Cut(stdout, "\nNOTES:\n")
	return notes
}

func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		err := c.Get(ctx, types.NamespacedName{Name: name}, crd)
		if err == nil {
			conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conditions {
				if cond := cond.(map[string]any); cond["type"] == "Established" && cond["status"] == "True" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s not Established after 30s (%v)", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// warningRecorder keeps the API server's warnings (Warning headers).
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, _ int, _, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

// take returns the warnings since the last call.
func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.warnings
	w.warnings = nil
	return out
}
