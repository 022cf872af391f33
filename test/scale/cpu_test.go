package scale

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

// processCPU is the CPU (user + system) each process of the run has used
// so far, by command name: the bed's processes (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok, Milvus Lite) and the
// manager are this test's children, each counted with its own children;
// "test" is this process itself (its informer and the writers creating the
// world). On 2 cores they all share, the differences between two readings
// say who took the CPU.
func processCPU() map[string]time.Duration {
	self := os.Getpid()
	out := map[string]time.Duration{"test": testenv.TreeCPU(self)}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name, ppid, ok := commAndParent(pid)
		if !ok || ppid != self {
			continue
		}
		used := testenv.TreeCPU(pid)
		out[name] += used
		out["test"] -= used
	}
	return out
}

// commAndParent reads a process' command name and parent from
// /proc/<pid>/stat.
func commAndParent(pid int) (string, int, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return s[open+1 : end], ppid, err == nil
}

// cpuSince is how much CPU each process used between two readings, in
// seconds.
func cpuSince(before, after map[string]time.Duration) map[string]float64 {
	out := map[string]float64{}
	for name, used := range after {
		out[name] = (used - before[name]).Seconds()
	}
	return out
}
