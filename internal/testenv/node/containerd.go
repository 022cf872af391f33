package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

// containerd is the node's container runtime, with its own root, state
// and socket under the node's folder.
type containerd struct {
	*testenv.Process
	dir, socket string
	// runDirs are the folders of runDir containerd will create (its
	// shims' sockets and fifos have a fixed place there), to remove again.
	runDirs []string
}

// runDir is where containerd 1.6 keeps its shims' sockets and fifos,
// whatever its --state; it leaves the folders empty when it stops.
const runDir = "/run/containerd"

// k8sNamespace is containerd's namespace of the CRI plugin's images and
// containers.
const k8sNamespace = "k8s.io"

// startContainerd writes containerd's config and starts it. The pod
// sandbox is the bed's pause image; the OOM score is kept at containerd's
// own (lowering it is refused to root in some VMs, which fails every
// sandbox); network namespaces are mounted under its state, not /run.
func startContainerd(ctx context.Context, dir, logDir string) (*containerd, error) {
	c := &containerd{dir: dir, socket: filepath.Join(dir, "containerd.sock")}
	for _, d := range []string{runDir, runDir + "/s", runDir + "/fifo", runDir + "/runc", runDir + "/runc/" + k8sNamespace} {
		if _, err := os.Stat(d); os.IsNotExist(err) {
			c.runDirs = append(c.runDirs, d)
		}
	}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
`, filepath.Join(dir, "containerd-root"), filepath.Join(dir, "containerd-state"), c.socket,
		PauseImage, cniBinDir, filepath.Join(dir, "cni"))
	configPath := filepath.Join(dir, "containerd.toml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return nil, fmt.Errorf("write containerd's config: %w", err)
	}
	p, err := testenv.StartProcess(testenv.ProcessSpec{Command: "containerd", Args: []string{"--config", configPath},
		LogPath: filepath.Join(logDir, "containerd.log")})
	if err != nil {
		return nil, err
	}
	c.Process = p
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if _, err := c.ctr(waitCtx, "version"); err == nil {
			return c, nil
		}
		select {
		case <-waitCtx.Done():
			_ = c.stop()
			return nil, fmt.Errorf("containerd did not answer on %s within 30s; see %s", c.socket, p.LogPath)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ctr runs containerd's client against this containerd.
func (c *containerd) ctr(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.socket, "--namespace", k8sNamespace}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// importImage imports an image tarball for the kubelet to run.
func (c *containerd) importImage(ctx context.Context, tarball string) error {
	if _, err := os.Stat(tarball); err != nil {
		return fmt.Errorf("image %s: %w (make image builds the bed's images)", tarball, err)
	}
	_, err := c.ctr(ctx, "images", "import", tarball)
	return err
}

// stop kills what still runs in containerd, stops it and the shims it
// started, and unmounts what it mounted.
func (c *containerd) stop() error {
	ctx := context.Background()
	if tasks, err := c.ctr(ctx, "tasks", "ls", "-q"); err == nil {
		for _, id := range strings.Fields(tasks) {
			_, _ = c.ctr(ctx, "tasks", "kill", "--signal", "SIGKILL", id)
		}
	}
	c.Stop()
	killShims(c.socket)
	err := unmountUnder(c.dir)
	for _, d := range slices.Backward(c.runDirs) {
		_ = os.Remove(d) // only when empty: never what another containerd uses
	}
	return err
}

// killShims kills the runc shims this containerd started: a shim outlives
// containerd by design, and is known by the socket in its arguments.
func killShims(socket string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if strings.Contains(args[0], "containerd-shim") && containsArg(args, socket) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func containsArg(args []string, want string) bool {
	for _, a := range args {
		if a == want || strings.HasPrefix(a, want) {
			return true
		}
	}
	return false
}
