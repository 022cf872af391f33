package testenv

import (
	"os"
	"testing"
	"time"
)

// A process's CPU is read from /proc, its children's with it.
func TestTreeCPUReadsThisProcess(t *testing.T) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	if cpu := TreeCPU(os.Getpid()); cpu < 10*time.Millisecond {
		t.Errorf("this process has used %s of CPU, want at least the 50 ms it just spun", cpu)
	}
	if rss, peak := Memory(os.Getpid()); rss <= 0 || peak < rss {
		t.Errorf("RSS %.1f MiB, peak %.1f", rss, peak)
	}
}
