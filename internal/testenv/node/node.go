// Package node runs a real Kubernetes node for the test bed: containerd
// (Debian's, as root, its state under a temp dir) as the kubelet's
// container runtime, the bridge, host-local and loopback CNI plugins, a
// kubelet and a kube-proxy (built from the Go module proxy by
// hack/node.sh), registered against the bed's API server. Images are
// imported into containerd, never pulled: no registry is reachable.
//
// Traffic stays on the machine. Pods get addresses on a bridge the node
// creates (PodCIDR, the host at its first address) and a route to the
// Service range only, no default route; nothing is masqueraded off the
// machine. Everything the node starts is stopped by PID; its mounts,
// cgroups, bridge, iptables chains and sysctls are undone by Stop.
package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

// EnvBinDir names the folder of the node's kubelet and kube-proxy
// (hack/node.sh prints it).
const EnvBinDir = "RAGROUTE_NODE_BIN"

// Options say how the node is wired.
type Options struct {
	// Dir holds the node's state and logs; it must be on a filesystem
	// overlayfs can use (not tmpfs under another overlay).
	Dir string
	// BinDir holds kubelet, kube-proxy and the pause image's tarball.
	BinDir string
	// Name is the Node's name.
	Name string
	// PodCIDR is the pods' range, a /24 whose first address is the host's
	// on the bridge; ServiceCIDR is the API server's Service range.
	PodCIDR, ServiceCIDR string
	// Images are image tarballs (docker or OCI archives with a name) to
	// import before the kubelet starts.
	Images []string
}

// Defaults of the bed: ranges no machine here uses.
const (
	DefaultPodCIDR     = "10.244.0.0/24"
	DefaultServiceCIDR = "10.96.0.0/16"
	DefaultName        = "ragroute-node"
	bridgeName         = "ragroute0"
	// cgroupRoot parents every pod's cgroup, so Stop can remove them all.
	cgroupRoot = "/ragroute-bed"
)

// HostIP is the host's address on the bridge of podCIDR: what a pod
// dials to reach a server on the host.
func HostIP(podCIDR string) (net.IP, error) {
	ip, network, err := net.ParseCIDR(podCIDR)
	if err != nil || ip.To4() == nil {
		return nil, fmt.Errorf("pod CIDR %q: want an IPv4 range such as %s", podCIDR, DefaultPodCIDR)
	}
	host := network.IP.To4()
	host = net.IPv4(host[0], host[1], host[2], host[3]+1)
	return host.To4(), nil
}

// Node is a running node.
type Node struct {
	opts       Options
	hostIP     net.IP
	containerd *containerd
	kubelet    *testenv.Process
	kubeProxy  *testenv.Process
	kubeconfig []byte
	undo       []func() error
}

// HostIP is where pods reach the host.
func (n *Node) HostIP() net.IP { return n.hostIP }

// Prepare takes the machine's node lock and creates the bridge, so
// servers on the host can listen on its address (the API server among
// them) before Start.
func Prepare(opts Options) (*Node, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a real node needs root: containerd, the kubelet and the CNI plugins manage mounts, cgroups and network namespaces")
	}
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.PodCIDR == "" {
		opts.PodCIDR = DefaultPodCIDR
	}
	if opts.ServiceCIDR == "" {
		opts.ServiceCIDR = DefaultServiceCIDR
	}
	hostIP, err := HostIP(opts.PodCIDR)
	if err != nil {
		return nil, err
	}
	n := &Node{opts: opts, hostIP: hostIP}
	if err := n.lockMachine(); err != nil {
		return nil, err
	}
	if err := n.refuseLeftovers(); err != nil {
		n.Stop()
		return nil, err
	}
	if err := n.createBridge(); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

// Start runs containerd, imports the images, then runs the kubelet and
// kube-proxy as kubeconfig's user, and waits until the Node is Ready. On
// error, whatever was started is stopped.
func (n *Node) Start(ctx context.Context, kubeconfig []byte) (err error) {
	n.kubeconfig = kubeconfig
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	for _, dir := range []string{n.opts.Dir, n.logDir()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("node folder: %w", err)
		}
	}
	if err := n.createCgroupRoot(); err != nil {
		return err
	}
	if err := n.enableForwarding(); err != nil {
		return err
	}
	if err := n.writeCNIConfig(); err != nil {
		return err
	}
	if n.containerd, err = startContainerd(ctx, n.opts.Dir, n.logDir()); err != nil {
		return err
	}
	n.undo = append(n.undo, n.containerd.stop)
	images := append([]string{filepath.Join(n.opts.BinDir, pauseTarball)}, n.opts.Images...)
	for _, image := range images {
		if err := n.containerd.importImage(ctx, image); err != nil {
			return err
		}
	}
	if err := n.startDNS(); err != nil {
		return err
	}
	if err := n.startKubelet(); err != nil {
		return err
	}
	if err := n.startKubeProxy(); err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return n.waitReady(waitCtx)
}

func (n *Node) logDir() string { return filepath.Join(n.opts.Dir, "logs") }

// Stop stops kube-proxy and the kubelet, then undoes what the node did,
// last first: containerd's containers killed and containerd stopped, the
// mounts, iptables chains, cgroups, sysctls and the bridge undone, the
// lock released. It may be called again.
func (n *Node) Stop() {
	n.kubeProxy.Stop()
	n.kubelet.Stop()
	for i := len(n.undo) - 1; i >= 0; i-- {
		if err := n.undo[i](); err != nil {
			fmt.Fprintf(os.Stderr, "node: %v\n", err)
		}
	}
	n.undo = nil
}
