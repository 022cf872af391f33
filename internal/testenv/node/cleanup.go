package node

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// unmountUnder unmounts every mount at or below dir, deepest first (the
// kubelet's volumes, containerd's snapshots and network namespaces).
func unmountUnder(dir string) error {
	mounts, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range slices.Backward(mounts) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points at or below dir, in mount order.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 5 {
			continue
		}
		// Octal escapes (a space is \040) stay: the bed's paths have none.
		if point := fields[4]; point == dir || strings.HasPrefix(point, dir+"/") {
			out = append(out, point)
		}
	}
	return out, scanner.Err()
}

// iptablesTables are where the kubelet and kube-proxy add chains.
var iptablesTables = []string{"filter", "nat", "mangle"}

// kubeChains lists the KUBE- chains of iptables and ip6tables.
func kubeChains() []string {
	var out []string
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, table := range iptablesTables {
			rules, err := exec.Command(cmd, "-t", table, "-S").Output()
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(rules), "\n") {
				if name, ok := strings.CutPrefix(line, "-N "); ok && strings.HasPrefix(name, "KUBE-") {
					out = append(out, cmd+" "+table+" "+name)
				}
			}
		}
	}
	return out
}

// deleteKubeChains deletes the rules that jump to KUBE- chains and the
// chains themselves: the kubelet leaves its own (KUBE-FIREWALL, the
// canaries) when it stops. Start refused to run over any such chain.
func deleteKubeChains() error {
	var errs []error
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, table := range iptablesTables {
			rules, err := exec.Command(cmd, "-t", table, "-S").Output()
			if err != nil {
				continue
			}
			var chains []string
			for _, line := range strings.Split(string(rules), "\n") {
				fields := ruleFields(line)
				switch {
				case len(fields) == 2 && fields[0] == "-N" && strings.HasPrefix(fields[1], "KUBE-"):
					chains = append(chains, fields[1])
				case len(fields) > 2 && fields[0] == "-A" && !strings.HasPrefix(fields[1], "KUBE-") && slices.Contains(fields, "-j") &&
					strings.HasPrefix(fields[slices.Index(fields, "-j")+1], "KUBE-"):
					// A jump from a built-in chain: delete the same rule.
					args := append([]string{"-t", table, "-D"}, fields[1:]...)
					if out, err := exec.Command(cmd, args...).CombinedOutput(); err != nil {
						errs = append(errs, fmt.Errorf("%s %s: %w: %s", cmd, strings.Join(args, " "), err, out))
					}
				}
			}
			for _, chain := range chains {
				_ = exec.Command(cmd, "-t", table, "-F", chain).Run()
			}
			for _, chain := range chains {
				if out, err := exec.Command(cmd, "-t", table, "-X", chain).CombinedOutput(); err != nil {
					errs = append(errs, fmt.Errorf("%s -t %s -X %s: %w: %s", cmd, table, chain, err, out))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// ruleFields splits a line of iptables -S into its arguments: words, or
// double-quoted strings (comments) without their quotes.
func ruleFields(line string) []string {
	var fields []string
	var field strings.Builder
	quoted, inField := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inField = !quoted, true
		case r == ' ' && !quoted:
			if inField {
				fields = append(fields, field.String())
				field.Reset()
				inField = false
			}
		default:
			field.WriteRune(r)
			inField = true
		}
	}
	if inField {
		fields = append(fields, field.String())
	}
	return fields
}

// cgroupHierarchies are the cgroup v1 controllers the kubelet manages (a
// unified hierarchy has the root itself).
func cgroupHierarchies() []string {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*")
	var out []string
	for _, d := range dirs {
		if info, err := os.Stat(d); err == nil && info.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// createCgroupRoot creates the pods' parent cgroup in every hierarchy.
func (n *Node) createCgroupRoot() error {
	n.undo = append(n.undo, removeCgroupRoot)
	for _, h := range cgroupHierarchies() {
		if err := os.MkdirAll(h+cgroupRoot, 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", h+cgroupRoot, err)
		}
	}
	return nil
}

// removeCgroupRoot removes the pods' cgroups, deepest first, trying for a
// few seconds: a container killed a moment ago may still be leaving its
// cgroup. One with a process left in it then says so.
func removeCgroupRoot() error {
	var err error
	for range 20 {
		if err = removeCgroupsOnce(); err == nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return err
}

func removeCgroupsOnce() error {
	var errs []error
	for _, h := range cgroupHierarchies() {
		var dirs []string
		_ = filepath.WalkDir(h+cgroupRoot, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for _, d := range slices.Backward(dirs) {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}
