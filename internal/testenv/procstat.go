package testenv

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's unit of process CPU times in /proc (USER_HZ:
// 100 on every Linux this runs on).
const clockTicks = 100

// TreeCPU is the CPU (user + system) that pid and its descendants have
// used so far: a launcher's children (Milvus Lite, a Python server's
// workers) count as the process.
func TreeCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	children := map[int][]int{}
	cpu := map[int]time.Duration{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, used, ok := readStat(p)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], p)
		cpu[p] = used
	}
	var total time.Duration
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		total += cpu[queue[0]]
		queue = append(queue, children[queue[0]]...)
	}
	return total
}

// readStat is a process's parent and its CPU so far, from /proc/<pid>/stat.
func readStat(pid int) (ppid int, used time.Duration, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// The command name is in parentheses and may hold spaces.
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(data[end+1:]))
	// After the name: state(0) ppid(1) … utime(11) stime(12).
	if len(fields) < 13 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(fields[1])
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return ppid, time.Duration(utime+stime) * time.Second / clockTicks, true
}

// Memory is a process's resident set now and at its peak, in MiB.
func Memory(pid int) (rss, peak float64) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		name, value, _ := strings.Cut(scanner.Text(), ":")
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			rss = kb / 1024
		case "VmHWM":
			peak = kb / 1024
		}
	}
	return rss, peak
}
