package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// cniBinDir is where Debian's containernetworking-plugins install.
const cniBinDir = "/usr/lib/cni"

// ip runs iproute2.
func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// refuseLeftovers refuses to start over another node, or over what a
// killed bed left: its bridge, or Kubernetes' iptables chains (which Stop
// deletes, so they must not be anyone else's).
func (n *Node) refuseLeftovers() error {
	if _, err := net.InterfaceByName(bridgeName); err == nil {
		return fmt.Errorf("bridge %s exists: another test bed node runs, or one was killed (ip link del %s)", bridgeName, bridgeName)
	}
	if chains := kubeChains(); len(chains) > 0 {
		return fmt.Errorf("iptables has Kubernetes chains (%s): a kubelet or kube-proxy runs on this machine, or one was killed", strings.Join(chains, ", "))
	}
	return nil
}

// createBridge creates the pods' bridge with the host's address on it;
// the bridge plugin attaches each pod to it.
func (n *Node) createBridge() error {
	_, network, _ := net.ParseCIDR(n.opts.PodCIDR)
	ones, _ := network.Mask.Size()
	if err := ip("link", "add", bridgeName, "type", "bridge"); err != nil {
		return err
	}
	n.undo = append(n.undo, func() error { return ip("link", "del", bridgeName) })
	if err := ip("addr", "add", fmt.Sprintf("%s/%d", n.hostIP, ones), "dev", bridgeName); err != nil {
		return err
	}
	return ip("link", "set", bridgeName, "up")
}

// sysctls the node needs: Service traffic is forwarded from the bridge
// back onto it, and bridged packets pass iptables so kube-proxy's rules
// see them.
var sysctls = []string{
	"/proc/sys/net/ipv4/ip_forward",
	"/proc/sys/net/bridge/bridge-nf-call-iptables",
}

// enableForwarding sets the sysctls to 1 and restores them on Stop.
func (n *Node) enableForwarding() error {
	for _, path := range sysctls {
		before, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s (the bridge netfilter module is needed): %w", path, err)
		}
		if err := os.WriteFile(path, []byte("1"), 0o644); err != nil {
			return fmt.Errorf("set %s: %w", path, err)
		}
		n.undo = append(n.undo, func() error { return os.WriteFile(path, before, 0o644) })
	}
	return nil
}

// writeCNIConfig is the pods' network: the bridge, addresses from
// PodCIDR, and a route to ServiceCIDR through the host; no default route
// and no masquerade, so nothing leads off the machine.
func (n *Node) writeCNIConfig() error {
	config := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "ragroute-bed",
		"plugins": []any{map[string]any{
			"type": "bridge", "bridge": bridgeName, "isGateway": true, "isDefaultGateway": false,
			"ipMasq": false, "hairpinMode": true,
			"ipam": map[string]any{
				"type":    "host-local",
				"ranges":  []any{[]any{map[string]string{"subnet": n.opts.PodCIDR, "gateway": n.hostIP.String()}}},
				"routes":  []any{map[string]string{"dst": n.opts.ServiceCIDR}},
				"dataDir": filepath.Join(n.opts.Dir, "cni-ipam"),
			},
		}},
	}
	data, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Join(n.opts.Dir, "cni")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, plugin)); err != nil {
			return errors.New("the CNI plugins are missing from " + cniBinDir + ": hack/node.sh installs containernetworking-plugins")
		}
	}
	return os.WriteFile(filepath.Join(dir, "10-ragroute-bed.conflist"), data, 0o644)
}
