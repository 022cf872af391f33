// Package kubebed starts a control plane that runs workloads without a
// container runtime: envtest's etcd and kube-apiserver, a
// kube-controller-manager running the deployment, replicaset, job and
// garbage-collector controllers, kube-scheduler, and kwok simulating the
// nodes. Pods are scheduled by the real scheduler onto kwok's nodes, where
// kwok marks them Running and Ready (Job pods then Succeeded), so
// Deployments become Available and Jobs complete as in a cluster. The API
// server can write an audit log of the writes of chosen users.
//
// With Options.RealNode the one node is instead a real kubelet on
// containerd (package node), and the API server listens on the node's
// bridge so pods reach it.
//
// The binaries come from KUBEBUILDER_ASSETS, which hack/testbed.sh prints.
// Every process binds to loopback (the API server of a real node's bed to
// the bridge's host address) and is stopped by PID.
package kubebed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/testenv/node"
)

// EnvAssets names the folder of the test bed's binaries.
const EnvAssets = "KUBEBUILDER_ASSETS"

// Options say what the bed runs.
type Options struct {
	// Dir holds logs, kubeconfigs and the audit log.
	Dir string
	// CRDDirs are installed before Start returns.
	CRDDirs []string
	// Nodes is how many simulated nodes to create (at least 1), unless
	// RealNode is set: then the bed's one node is a real kubelet.
	Nodes    int
	RealNode *RealNodeOptions
	// AuditUsers: when set, the API server logs (at Metadata level) every
	// create, update, patch and delete these users make to AuditLogPath.
	AuditUsers []string
	// ControllerManager tunes kube-controller-manager; its Controllers
	// default to testenv.WorkloadControllers.
	ControllerManager testenv.ControllerManagerOptions
	// APIServerGOGC is the API server's GOGC (0: Go's default, 100). The
	// bed shares its cores with what runs on it, and under load the API
	// server spends up to 40% of its CPU collecting garbage; a higher
	// value trades its memory for that CPU.
	APIServerGOGC int
	// EtcdInMemory keeps etcd's data under /dev/shm (where there is one):
	// etcd 3.4 (Debian's) has no --unsafe-no-fsync, and a disk's fsync
	// per write sets the pace of every write the bed serves.
	EtcdInMemory bool
}

// sharedMemory is the tmpfs Linux mounts for every machine.
const sharedMemory = "/dev/shm"

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// Bed is a running control plane with simulated nodes.
type Bed struct {
	Env *envtest.Environment
	// Admin is a system:masters client config without client-side rate
	// limit.
	Admin *rest.Config
	// AuditLogPath is the API server's audit log (when Options.AuditUsers).
	AuditLogPath string
	// Node is the real node (when Options.RealNode).
	Node       *node.Node
	rootCAFile string
	dir        string
	etcdDir    string
	procs      []*testenv.Process
}

// Start starts the bed and waits until its nodes are Ready. On error,
// whatever was started is stopped.
func Start(ctx context.Context, opts Options) (_ *Bed, err error) {
	assets := os.Getenv(EnvAssets)
	if assets == "" {
		return nil, errors.New(EnvAssets + " is unset: run `make test`, which builds the test bed (hack/testbed.sh)")
	}
	wanted := []string{"kube-scheduler", "kwok", testenv.KwokStagesFile}
	if opts.RealNode != nil {
		wanted = wanted[:1]
	}
	for _, bin := range wanted {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("%s is not in %s: run hack/testbed.sh", bin, assets)
		}
	}
	if opts.Nodes < 1 {
		opts.Nodes = 1
	}
	b := &Bed{dir: opts.Dir}
	defer func() {
		if err != nil {
			b.Stop()
		}
	}()
	b.Env = &envtest.Environment{
		CRDDirectoryPaths:     opts.CRDDirs,
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	// kwok watches from resourceVersion "0", which the WatchList feature
	// turns into a watch-list stream; Debian's etcd 3.4 cannot serve those
	// (no progress notifications), so the watch fails and kwok would see
	// pods only when it relists, with growing back-off.
	b.Env.ControlPlane.GetAPIServer().Configure().
		Append("feature-gates", "WatchList=false").
		// envtest's /24 holds 254 Services; a route has one.
		Set("service-cluster-ip-range", node.DefaultServiceCIDR)
	if opts.RealNode != nil {
		if err := b.prepareRealNode(*opts.RealNode); err != nil {
			return nil, err
		}
	}
	if opts.EtcdInMemory && isDir(sharedMemory) {
		if b.etcdDir, err = os.MkdirTemp(sharedMemory, "kubebed-etcd-"); err != nil {
			return nil, fmt.Errorf("etcd's data folder in memory: %w", err)
		}
		b.Env.ControlPlane.Etcd = &envtest.Etcd{DataDir: b.etcdDir}
	}
	if opts.APIServerGOGC > 0 {
		if err := b.tuneAPIServerGC(assets, opts.APIServerGOGC); err != nil {
			return nil, err
		}
	}
	if len(opts.AuditUsers) > 0 {
		if err := b.configureAudit(opts.AuditUsers); err != nil {
			return nil, err
		}
	}
	if _, err := b.Env.Start(); err != nil {
		b.Env = nil
		return nil, fmt.Errorf("start etcd and kube-apiserver: %w", err)
	}

	admin, err := b.AddUser("kubebed-admin", "system:masters")
	if err != nil {
		return nil, err
	}
	b.Admin = admin.Config()
	b.Admin.QPS = -1 // no client-side rate limit, as controller-runtime's clients

	kcmOpts := opts.ControllerManager
	switch {
	case len(kcmOpts.Controllers) > 0:
	case opts.RealNode != nil:
		kcmOpts.Controllers = testenv.NodeControllers
	default:
		kcmOpts.Controllers = testenv.WorkloadControllers
	}
	kcmOpts.RootCAFile = b.rootCAFile
	if err := b.startProcess("kube-controller-manager", func(kubeconfig []byte) (*testenv.Process, error) {
		return testenv.StartControllerManager(ctx, assets, b.dir, kubeconfig, kcmOpts)
	}); err != nil {
		return nil, err
	}
	if err := b.startProcess("kube-scheduler", func(kubeconfig []byte) (*testenv.Process, error) {
		return testenv.StartScheduler(ctx, assets, b.dir, kubeconfig)
	}); err != nil {
		return nil, err
	}
	if opts.RealNode != nil {
		return b, b.startRealNode(ctx)
	}
	if err := b.startProcess("kwok", func(kubeconfig []byte) (*testenv.Process, error) {
		return testenv.StartKwok(assets, b.dir, kubeconfig)
	}); err != nil {
		return nil, err
	}
	if err := b.createNodes(ctx, opts.Nodes); err != nil {
		return nil, err
	}
	return b, nil
}

// startProcess runs one component as its own system:masters user, so the
// audit log and the API server's metrics tell the components apart.
func (b *Bed) startProcess(name string, run func(kubeconfig []byte) (*testenv.Process, error)) error {
	user, err := b.AddUser("kubebed:"+name, "system:masters")
	if err != nil {
		return err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig of %s: %w", name, err)
	}
	p, err := run(kubeconfig)
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	b.procs = append(b.procs, p)
	return nil
}

// AddUser provisions a client certificate for name in groups.
func (b *Bed) AddUser(name string, groups ...string) (*envtest.AuthenticatedUser, error) {
	user, err := b.Env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", name, err)
	}
	return user, nil
}

// WriteKubeconfig provisions a user and writes its kubeconfig to path.
func (b *Bed) WriteKubeconfig(path, name string, groups ...string) (*rest.Config, error) {
	user, err := b.AddUser(name, groups...)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of %s: %w", name, err)
	}
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	return user.Config(), nil
}

// configureAudit makes the API server log the writes of users, and nothing
// else, one JSON event per line once each request completes.
func (b *Bed) configureAudit(users []string) error {
	quoted := make([]string, len(users))
	for i, u := range users {
		quoted[i] = fmt.Sprintf("%q", u)
	}
	policy := fmt.Sprintf(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: [%s]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`, strings.Join(quoted, ", "))
	policyPath := filepath.Join(b.dir, "audit-policy.yaml")
	if err := os.WriteFile(policyPath, []byte(policy), 0o600); err != nil {
		return err
	}
	b.AuditLogPath = filepath.Join(b.dir, "audit.log")
	b.Env.ControlPlane.GetAPIServer().Configure().
		Set("audit-policy-file", policyPath).
		Set("audit-log-path", b.AuditLogPath).
		Set("audit-log-format", "json").
		Set("audit-log-mode", "blocking").
		Set("audit-log-maxsize", "0")
	return nil
}

// createNodes creates the simulated nodes and waits until kwok marks them
// Ready.
func (b *Bed) createNodes(ctx context.Context, n int) error {
	cs, err := kubernetes.NewForConfig(b.Admin)
	if err != nil {
		return err
	}
	for i := range n {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				"kwok.x-k8s.io/node":           "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create node %s: %w", name, err)
		}
	}
	return b.untaintWhenReady(ctx, n, filepath.Join(b.dir, "kwok.log"))
}

// untaintWhenReady waits until n nodes are Ready, then lifts the
// not-ready taint the API server puts on every new node, as the node
// lifecycle controller would (it does not run here: with no kubelet
// heartbeat it would soon mark kwok's nodes unreachable). logs says where
// to look when they are not.
func (b *Bed) untaintWhenReady(ctx context.Context, n int, logs string) error {
	cs, err := kubernetes.NewForConfig(b.Admin)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := 0
		for _, node := range nodes.Items {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready == n {
			for _, node := range nodes.Items {
				patch := []byte(`{"spec":{"taints":null}}`)
				if _, err := cs.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					return fmt.Errorf("untaint node %s: %w", node.Name, err)
				}
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d nodes Ready after 60s; see %s", ready, n, logs)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// EtcdInMemory reports whether etcd keeps its data in memory.
func (b *Bed) EtcdInMemory() bool { return b.etcdDir != "" }

// tuneAPIServerGC runs the API server through a script that sets its
// GOGC: envtest starts it with the test's own environment. The script
// execs, so the API server keeps the PID envtest stops.
func (b *Bed) tuneAPIServerGC(assets string, gogc int) error {
	script := filepath.Join(b.dir, "kube-apiserver.sh")
	body := fmt.Sprintf("#!/bin/sh\nGOGC=%d exec '%s' \"$@\"\n", gogc, filepath.Join(assets, "kube-apiserver"))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		return fmt.Errorf("write the API server's start script: %w", err)
	}
	b.Env.ControlPlane.GetAPIServer().Path = script
	return nil
}

// Stop stops kwok, the scheduler, the controller manager, then the API
// server and etcd.
func (b *Bed) Stop() {
	if b.Node != nil {
		b.Node.Stop() // it needs no API server to stop
		b.Node = nil
	}
	for i := len(b.procs) - 1; i >= 0; i-- {
		b.procs[i].Stop()
	}
	b.procs = nil
	if b.Env != nil {
		_ = b.Env.Stop()
		b.Env = nil
	}
	if b.etcdDir != "" {
		_ = os.RemoveAll(b.etcdDir)
		b.etcdDir = ""
	}
}
