//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// containerdConfig keeps the test's containerd to what ctr needs: no CRI
// plugin (it wants CNI and would touch the host's network setup).
const containerdConfig = `version = 2
disabled_plugins = ["io.containerd.grpc.v1.cri"]
`

// TestContainerdImportsAndRuns imports the tarball into a containerd of its
// own, in the kubelet's namespace, and runs it: the name a pod uses must
// resolve and the image's user, folder and files must work for nonroot.
func TestContainerdImportsAndRuns(t *testing.T) {
	for _, tool := range []string{"containerd", "ctr", "runc", "containerd-shim-runc-v2"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH: the containerd import test needs containerd, ctr, runc and the runc shim", tool)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("the containerd import test needs root (containerd mounts and runs containers)")
	}
	dir := t.TempDir()
	whoami := filepath.Join(dir, "whoami")
	staticBinary(t, whoami)
	tarball := filepath.Join(dir, "image.tar")
	var printed bytes.Buffer
	args := []string{"--binary", whoami, "--entrypoint", "/ragroute", "--name", "ragroute/ragroute:test", "--out", tarball}
	if err := run(args, func(string) string { return "" }, &printed); err != nil {
		t.Fatalf("building the image: %v", err)
	}
	digest := strings.Fields(printed.String())[2]

	sock := startContainerd(t, dir)
	ctr := func(timeout time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, "ctr", append([]string{"-a", sock, "-n", "k8s.io"}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := ctr(2*time.Minute, "images", "import", tarball); err != nil {
		t.Fatalf("ctr images import: %v\n%s", err, out)
	}
	out, err := ctr(30*time.Second, "images", "ls")
	if err != nil {
		t.Fatalf("ctr images ls: %v\n%s", err, out)
	}
	// The kubelet asks containerd for the normalized name of a pod's image.
	if !hasImage(out, "docker.io/ragroute/ragroute:test", digest) {
		t.Fatalf("after import, no image docker.io/ragroute/ragroute:test with digest %s:\n%s", digest, out)
	}

	id := fmt.Sprintf("ragroute-image-test-%d", os.Getpid())
	t.Cleanup(func() {
		// Only if the run below failed to remove its container.
		ctr(10*time.Second, "tasks", "kill", "-s", "SIGKILL", id)
		ctr(10*time.Second, "tasks", "rm", "-f", id)
		ctr(10*time.Second, "containers", "rm", id)
	})
	// No command given: the image's entrypoint, user and folder apply.
	out, err = ctr(time.Minute, "run", "--rm", "docker.io/ragroute/ragroute:test", id)
	if err != nil {
		t.Fatalf("ctr run: %v\n%s", err, out)
	}
	want := `uid=65532 gid=65532 user=nonroot home=/home/nonroot cwd=/ tmp=writable certs=ok args=[]`
	if strings.TrimSpace(out) != want {
		t.Fatalf("the container printed\n%s\nwant\n%s", out, want)
	}
}

// startContainerd runs containerd with everything under dir and stops it
// (by its PID) when the test ends; it returns the socket's path.
func startContainerd(t *testing.T, dir string) string {
	t.Helper()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(containerdConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "c.sock")
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--root", filepath.Join(dir, "root"), "--state", filepath.Join(dir, "state"),
		"--address", sock, "--config", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting containerd: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		logf.Close()
		unmountUnder(t, dir)
		if t.Failed() {
			if b, err := os.ReadFile(logf.Name()); err == nil {
				t.Logf("containerd's log:\n%s", tail(string(b), 40))
			}
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := exec.CommandContext(ctx, "ctr", "-a", sock, "version").Run()
		cancel()
		if err == nil {
			return sock
		}
		select {
		case <-exited:
			t.Fatalf("containerd exited at start (log: %s)", logf.Name())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not answer on %s within 30s: %v", sock, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unmountUnder detaches any mount containerd left below dir, deepest first,
// so that t.TempDir's removal does not fail on a busy snapshot.
func unmountUnder(t *testing.T, dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Logf("listing mounts: %v", err)
		return
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			points = append(points, fields[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			t.Logf("unmounting %s: %v", p, err)
		}
	}
}

// hasImage reports whether `ctr images ls` lists ref with digest.
func hasImage(ls, ref, digest string) bool {
	for _, l := range strings.Split(ls, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == ref && f[2] == digest {
			return true
		}
	}
	return false
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
