package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/testenv"
)

// TestOperatorRoleMaySetItsOwnerReferences: against an API server with the
// OwnerReferencesPermissionEnforcement admission plugin on (OpenShift's
// default), a user holding only the operator's generated role
// (config/rbac/role.yaml, which the chart ships) may apply the children
// each owning kind builds, whose owner references set blockOwnerDeletion:
// the plugin lets that through only with update on the owner's
// finalizers. Its own API server: the shared suite runs the operator as
// an administrator, whom the plugin does not check.
func TestOperatorRoleMaySetItsOwnerReferences(t *testing.T) {
	testenv.Integration(t, "the test bed's kube-apiserver and etcd")
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is unset: run `make test`, which builds the test bed (hack/testbed.sh)")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	env.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict([]byte(strings.TrimPrefix(string(raw), "---\n")), role); err != nil {
		t.Fatalf("config/rbac/role.yaml: %v", err)
	}
	const operatorUser = "ragroute-operator"
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: operatorUser}},
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}
	for _, obj := range []client.Object{role, binding, ns} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatalf("create %T: %v", obj, err)
		}
	}
	user, err := env.AddUser(envtest.User{Name: operatorUser}, nil)
	if err != nil {
		t.Fatal(err)
	}
	operator, err := client.New(user.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	store := newStore(ns.Name, "handbook", "http://milvus.test:19530")
	route := newRoute(ns.Name, "support", store.Name, "support")
	evaluation := &v1alpha1.RouteEvaluation{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "support-eval"},
		Spec: v1alpha1.RouteEvaluationSpec{
			RouteRef:  v1alpha1.LocalObjectRef{Name: route.Name},
			Questions: v1alpha1.ConfigMapKeyRef{Name: "questions", Key: "questions.jsonl"},
			Source:    "handbook",
			Identity:  v1alpha1.EvaluationIdentity{TokenSecretRef: &v1alpha1.SecretKeyRef{Name: "eval-jwt", Key: "token"}},
			OnChange:  true,
		},
	}
	for _, obj := range []client.Object{store, route, evaluation} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatalf("create %T: %v", obj, err)
		}
	}
	children := map[string]runtime.ApplyConfiguration{
		"KnowledgeStore":  buildIngestConfigMap(store, []byte("{}")),
		"QueryRoute":      buildRouteConfigMap(route, []byte("{}")),
		"RouteEvaluation": buildEvaluationResults(evaluation, &v1alpha1.EvaluationRun{Job: "run"}, []byte("{}")),
	}
	for kind, child := range children {
		if err := operator.Apply(ctx, child, fieldOwner, client.ForceOwnership); err != nil {
			t.Errorf("the operator's role cannot apply a child a %s owns: %v", kind, err)
		}
	}
}
