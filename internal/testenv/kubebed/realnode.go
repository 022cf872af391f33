package kubebed

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/testenv/node"
)

// RealNodeOptions make the bed's one node a real kubelet on containerd
// (package node) instead of kwok's simulated ones.
type RealNodeOptions struct {
	// BinDir holds the kubelet, kube-proxy and the pause image
	// (hack/node.sh prints it).
	BinDir string
	// Images are image tarballs to import into the node.
	Images []string
}

// prepareRealNode creates the node's bridge and makes the API server
// reachable from pods: it listens and advertises on the host's bridge
// address (so the kubernetes Service's endpoint is one a pod can reach),
// with a serving certificate that names the Service's address too (what
// in-cluster clients dial), and admits pods with their ServiceAccount's
// token.
func (b *Bed) prepareRealNode(opts RealNodeOptions) error {
	nodeDir := filepath.Join(b.dir, "node")
	n, err := node.Prepare(node.Options{Dir: nodeDir, BinDir: opts.BinDir, Images: opts.Images})
	if err != nil {
		return err
	}
	b.Node = n
	serviceIP, err := firstServiceIP(node.DefaultServiceCIDR)
	if err != nil {
		return err
	}
	ca, err := testenv.NewCA("kubebed-apiserver-ca")
	if err != nil {
		return err
	}
	certPEM, keyPEM, err := ca.IssueFor(
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.IPv4(127, 0, 0, 1), n.HostIP(), serviceIP})
	if err != nil {
		return err
	}
	signer, err := testenv.NewCA("kubebed-service-accounts")
	if err != nil {
		return err
	}
	signerKey, err := signer.KeyPEM()
	if err != nil {
		return err
	}
	certDir := filepath.Join(b.dir, "apiserver-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	// envtest uses the files it finds in its CertDir (these names) and
	// generates none.
	for name, data := range map[string][]byte{
		"apiserver.crt": certPEM, "apiserver.key": keyPEM, "sa-signer.crt": signer.PEM, "sa-signer.key": signerKey, "ca.crt": ca.PEM,
	} {
		if err := os.WriteFile(filepath.Join(certDir, name), data, 0o600); err != nil {
			return err
		}
	}
	b.rootCAFile = filepath.Join(certDir, "ca.crt")
	api := b.Env.ControlPlane.GetAPIServer()
	api.CertDir = certDir
	api.CA = ca.PEM
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	// SecureServing.ListenAddr: envtest picks a loopback address unless
	// both are set.
	api.Address, api.Port = n.HostIP().String(), strconv.Itoa(port)
	api.Configure().
		Set("advertise-address", n.HostIP().String()).
		Set("service-cluster-ip-range", node.DefaultServiceCIDR).
		// envtest turns ServiceAccount admission off (it runs no
		// controller to make the default ServiceAccount); the bed runs it.
		Disable("disable-admission-plugins")
	return nil
}

// firstServiceIP is the kubernetes Service's address in cidr.
func firstServiceIP(cidr string) (net.IP, error) {
	_, network, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("service CIDR %q: %w", cidr, err)
	}
	ip := network.IP.To4()
	return net.IPv4(ip[0], ip[1], ip[2], ip[3]+1).To4(), nil
}

// startRealNode starts the node as a system:masters user and waits until
// it is Ready and schedulable.
func (b *Bed) startRealNode(ctx context.Context) error {
	user, err := b.Env.AddUser(envtest.User{Name: "kubebed:kubelet", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("add the node's user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	if err := b.Node.Start(ctx, kubeconfig); err != nil {
		return err
	}
	return b.untaintWhenReady(ctx, 1, "the kubelet")
}
