package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/testenv/kubebed"
)

// operatorUser is who the operator authenticates as.
const operatorUser = "ragroute-operator"

func (d *demo) operatorKubeconfig() string { return filepath.Join(d.cfg.work, "operator.kubeconfig") }

// startControlPlane starts etcd and kube-apiserver from the test bed with
// the CRDs installed, writes an admin kubeconfig for the user and one for
// the operator, and binds the operator's ClusterRole.
func (d *demo) startControlPlane(ctx context.Context) error {
	d.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(d.cfg.root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: d.cfg.assets,
	}
	if _, err := d.env.Start(); err != nil {
		return fmt.Errorf("start etcd and kube-apiserver: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	admin, err := d.addUser(envtest.User{Name: "demo-admin", Groups: []string{"system:masters"}}, filepath.Join(d.cfg.work, "kubeconfig"))
	if err != nil {
		return err
	}
	if d.admin, err = client.New(admin.Config(), client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	if _, err := d.addUser(envtest.User{Name: operatorUser}, d.operatorKubeconfig()); err != nil {
		return err
	}
	if err := d.bindOperatorRole(ctx); err != nil {
		return err
	}
	if err := d.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	fmt.Printf("    kube-apiserver %s; kubectl: export KUBECONFIG=%s\n", d.env.Config.Host, filepath.Join(d.cfg.work, "kubeconfig"))
	return nil
}

// addUser provisions a client certificate for u and writes its kubeconfig.
func (d *demo) addUser(u envtest.User, path string) (*envtest.AuthenticatedUser, error) {
	user, err := d.env.AddUser(u, nil)
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", u.Name, err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of %s: %w", u.Name, err)
	}
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return user, nil
}

// bindOperatorRole installs config/rbac/role.yaml (generated from the
// controllers' RBAC markers, as the Helm chart ships it) for the operator.
func (d *demo) bindOperatorRole(ctx context.Context) error {
	return kubebed.BindClusterRole(ctx, d.admin, filepath.Join(d.cfg.root, "config", "rbac", "role.yaml"), operatorUser)
}
