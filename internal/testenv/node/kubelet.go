package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ragroute/ragroute/internal/testenv"
)

// PauseImage is the pod sandbox image hack/node.sh builds (pauseTarball
// in the node's BinDir).
const (
	PauseImage   = "ragroute.local/pause:bed"
	pauseTarball = "pause.tar"
)

// startKubelet runs the kubelet on containerd. Its API listens on
// loopback only and admits no anonymous caller, so no pod can reach it;
// pod logs are files under the node's folder (PodLogsDir), and `kubectl
// logs` does not work. Image garbage collection is off: an imported image
// cannot be pulled again.
func (n *Node) startKubelet() error {
	kubeconfig := filepath.Join(n.opts.Dir, "kubelet.kubeconfig")
	if err := os.WriteFile(kubeconfig, n.kubeconfig, 0o600); err != nil {
		return err
	}
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	healthz, err := testenv.FreePort()
	if err != nil {
		return err
	}
	// Pods resolve Services at the node's DNS server (dns.go); the
	// host's resolvers are no pod's: nothing is resolved off the machine.
	resolv := filepath.Join(n.opts.Dir, "resolv.conf")
	if err := os.WriteFile(resolv, nil, 0o644); err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: %s
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%s
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
podCIDR: %s
podLogsDir: %s
resolvConf: %s
clusterDNS: [%s]
clusterDomain: %s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%%"
  imagefs.available: "1%%"
serializeImagePulls: false
`, cgroupRoot, n.containerd.socket, port, healthz, n.opts.PodCIDR, n.PodLogsDir(), resolv, n.hostIP, clusterDomain)
	configPath := filepath.Join(n.opts.Dir, "kubelet.yaml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return err
	}
	rootDir := filepath.Join(n.opts.Dir, "kubelet")
	// The kubelet mounts its root folder and its pods' volumes; its
	// iptables chains stay when it stops.
	n.undo = append(n.undo, deleteKubeChains, removeContainerLogLinks(n.PodLogsDir()), func() error { return unmountUnder(rootDir) })
	n.kubelet, err = testenv.StartProcess(testenv.ProcessSpec{
		Command: filepath.Join(n.opts.BinDir, "kubelet"),
		Args: []string{"--config=" + configPath, "--kubeconfig=" + kubeconfig, "--root-dir=" + rootDir,
			"--hostname-override=" + n.opts.Name, "--node-ip=" + n.hostIP.String()},
		LogPath: filepath.Join(n.logDir(), "kubelet.log"),
	})
	return err
}

// PodLogsDir holds the pods' container logs, <namespace>_<pod>_<uid>/<container>/<n>.log.
func (n *Node) PodLogsDir() string { return filepath.Join(n.opts.Dir, "pod-logs") }

// PodLogs is what a pod's containers wrote, line by line, without the
// CRI log format's time, stream and tag: what `kubectl logs` would show
// (the bed's kubelet serves no logs API).
func (n *Node) PodLogs(namespace, pod string) string {
	files, _ := filepath.Glob(filepath.Join(n.PodLogsDir(), namespace+"_"+pod+"_*", "*", "*.log"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(&b, "(%v)\n", err)
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if parts := strings.SplitN(line, " ", 4); len(parts) == 4 {
				b.WriteString(parts[3] + "\n")
			}
		}
	}
	return b.String()
}

// removeContainerLogLinks removes the links the kubelet makes in
// /var/log/containers (a fixed path) to the logs under podLogsDir.
func removeContainerLogLinks(podLogsDir string) func() error {
	return func() error {
		links, _ := filepath.Glob("/var/log/containers/*.log")
		for _, link := range links {
			if target, err := os.Readlink(link); err == nil && strings.HasPrefix(target, podLogsDir+"/") {
				_ = os.Remove(link)
			}
		}
		return nil
	}
}

// startKubeProxy runs kube-proxy in iptables mode: Services reach pods
// from the host and from pods; NodePorts listen on the bridge only.
func (n *Node) startKubeProxy() error {
	healthz, err := testenv.FreePort()
	if err != nil {
		return err
	}
	metrics, err := testenv.FreePort()
	if err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
mode: iptables
clusterCIDR: %s
hostnameOverride: %s
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
nodePortAddresses: ["%s/32"]
iptables:
  localhostNodePorts: false
conntrack:
  maxPerCore: 0
`, filepath.Join(n.opts.Dir, "kubelet.kubeconfig"), n.opts.PodCIDR, n.opts.Name, healthz, metrics, n.hostIP)
	configPath := filepath.Join(n.opts.Dir, "kube-proxy.yaml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return err
	}
	n.kubeProxy, err = testenv.StartProcess(testenv.ProcessSpec{
		Command: filepath.Join(n.opts.BinDir, "kube-proxy"), Args: []string{"--config=" + configPath},
		LogPath: filepath.Join(n.logDir(), "kube-proxy.log"),
	})
	return err
}

// KubeProxyLog is what kube-proxy wrote: why a Service is not yet
// programmed, when one is not.
func (n *Node) KubeProxyLog() string {
	data, err := os.ReadFile(filepath.Join(n.logDir(), "kube-proxy.log"))
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return string(data)
}

// startDNS serves the pods' Service lookups on port 53 of the bridge.
func (n *Node) startDNS() error {
	cs, err := n.client()
	if err != nil {
		return err
	}
	dns, err := startDNS(net.JoinHostPort(n.hostIP.String(), "53"), cs)
	if err != nil {
		return fmt.Errorf("the node's DNS server: %w", err)
	}
	n.undo = append(n.undo, dns.stop)
	return nil
}

// client is a client of the API server as the node's user.
func (n *Node) client() (kubernetes.Interface, error) {
	config, err := clientcmd.RESTConfigFromKubeConfig(n.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("node kubeconfig: %w", err)
	}
	return kubernetes.NewForConfig(config)
}

// waitReady waits until the kubelet registered the Node and it is Ready.
func (n *Node) waitReady(ctx context.Context) error {
	cs, err := n.client()
	if err != nil {
		return err
	}
	for {
		node, err := cs.CoreV1().Nodes().Get(ctx, n.opts.Name, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return nil
				}
			}
		}
		if n.kubelet.Exited() || n.kubeProxy.Exited() {
			return fmt.Errorf("the kubelet or kube-proxy exited; see %s", n.logDir())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not Ready: %w; see %s", n.opts.Name, ctx.Err(), filepath.Join(n.logDir(), "kubelet.log"))
		case <-time.After(250 * time.Millisecond):
		}
	}
}
