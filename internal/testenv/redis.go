package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// SecureRedis is a redis-server that speaks only TLS, with a certificate
// of its own CA, and admits only one ACL user (the default user is off),
// to the keys of routes (ragroute:*) and no dangerous command, as
// docs/route.md advises.
type SecureRedis struct {
	*Process
	Addr string
	// CA signs the server's certificate, issued for ServerName and
	// 127.0.0.1.
	CA                 *CA
	ServerName         string
	Username, Password string
}

// StartSecureRedis starts a TLS-only redis-server on a free loopback port
// whose one user is username with password.
func StartSecureRedis(ctx context.Context, dir, username, password string) (*SecureRedis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (make test installs Debian's redis-server): %w", err)
	}
	const serverName = "redis.test"
	ca, err := NewCA("ragroute test CA")
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := ca.Issue(serverName)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"ca.crt": ca.PEM, "tls.crt": certPEM, "tls.key": keyPEM}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", name, err)
		}
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p, err := startListening(ctx, dir, bin, port, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", filepath.Join(dir, "tls.crt"), "--tls-key-file", filepath.Join(dir, "tls.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt"), "--tls-auth-clients", "no",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--user", "default", "off", "--user", username, "on", ">"+password, "~ragroute:*", "&*", "+@all", "-@dangerous")
	if err != nil {
		return nil, err
	}
	return &SecureRedis{Process: p, Addr: fmt.Sprintf("127.0.0.1:%d", port), CA: ca, ServerName: serverName,
		Username: username, Password: password}, nil
}
