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
	dir  string
	port int
}

// StartRedis starts Debian's redis-server (installed by hack/testbed.sh)
// on a free loopback port.
func StartRedis(ctx context.Context, dir string) (*Redis, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	r := &Redis{Addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir, port: port}
	if err := r.Restart(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Restart starts redis-server again on the same address after Stop. It
// comes back empty, as a Redis without persistence does.
func (r *Redis) Restart(ctx context.Context) error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("redis-server not found (make test installs Debian's redis-server): %w", err)
	}
	p, err := start(r.dir, bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.dir)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := p.waitForPort(waitCtx, r.Addr); err != nil {
		p.Stop()
		return err
	}
	r.Process = p
	return nil
}
