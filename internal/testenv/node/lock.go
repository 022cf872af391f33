package node

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockWait bounds how long a node waits for another one to stop.
const lockWait = 10 * time.Minute

// lockMachine takes the machine's one node lock, waiting while another
// test's node holds it: go test runs packages in parallel, and two nodes
// would share the bridge, the iptables chains and the cgroup root. The
// lock goes with the process, so a killed test leaves none.
func (n *Node) lockMachine() error {
	path := filepath.Join(os.TempDir(), "ragroute-node.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("node lock: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK || time.Now().After(deadline) {
			_ = f.Close()
			return fmt.Errorf("node lock %s: another test bed node ran for over %s: %w", path, lockWait, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	n.undo = append(n.undo, f.Close) // first in, so released last
	return nil
}
