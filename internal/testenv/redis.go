package testenv

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"time"
)

// Redis is a running redis-server on loopback, without persistence.
type Redis struct {
	*Process
	Addr string
}

// StartRedis starts Debian's redis-server (installed by hack/testbed.sh)
// on a free loopback port.
func StartRedis(ctx context.Context, dir string) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (make test installs Debian's redis-server): %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p, err := start(dir, bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	waitCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := p.waitForPort(waitCtx, addr); err != nil {
		p.Stop()
		return nil, err
	}
	return &Redis{Process: p, Addr: addr}, nil
}
