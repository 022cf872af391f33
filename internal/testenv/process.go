package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Process is a server a test started.
type Process struct {
	name string
	cmd  *exec.Cmd
	done chan error
	// LogPath holds the process' stdout and stderr.
	LogPath string
}

// start runs name with args, logging to dir/<name>.log.
func start(dir, name string, args ...string) (*Process, error) {
	return StartProcess(ProcessSpec{LogPath: filepath.Join(dir, filepath.Base(name)+".log"), Command: name, Args: args})
}

// startListening starts name and waits up to a minute until it listens on
// the loopback port; a process that does not is stopped.
func startListening(ctx context.Context, dir, name string, port int, args ...string) (*Process, error) {
	p, err := start(dir, name, args...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := p.waitForPort(ctx, fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// ProcessSpec says what to run and where its output goes.
type ProcessSpec struct {
	Command string
	Args    []string
	// Env is added to this process' environment.
	Env     []string
	LogPath string
}

// StartProcess runs spec in its own process group, logging to its LogPath;
// Stop ends it.
func StartProcess(spec ProcessSpec) (*Process, error) {
	name, logPath := spec.Command, spec.LogPath
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd := exec.Command(name, spec.Args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so a child it spawns is stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{name: strings.TrimSuffix(filepath.Base(logPath), ".log"), cmd: cmd, done: make(chan error, 1), LogPath: logPath}
	go func() {
		p.done <- cmd.Wait()
		_ = logFile.Close()
	}()
	return p, nil
}

// Stop ends the process group (TERM, then KILL after a grace period). It
// may be called again: a process that has ended is not signalled (its
// group id could belong to another process by then).
func (p *Process) Stop() {
	if p == nil || p.Exited() {
		return
	}
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	// A stopped process exits with a signal status: the wait's error is
	// expected and dropped.
	stopped := make(chan struct{})
	go func() { _ = p.wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-stopped
	}
}

// wait is the process's exit; the result stays for the next reader.
func (p *Process) wait() error {
	err := <-p.done
	p.done <- err
	return err
}

// Exited reports whether the process has ended, without waiting.
func (p *Process) Exited() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

// waitForPort waits until addr accepts TCP connections or the process exits.
func (p *Process) waitForPort(ctx context.Context, addr string) error {
	for {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			return conn.Close()
		}
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited before listening on %s (%v); see %s", p.name, addr, err, p.LogPath)
		case <-ctx.Done():
			return fmt.Errorf("%s did not listen on %s: %w; see %s", p.name, addr, ctx.Err(), p.LogPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("find free port: not a TCP address")
	}
	return addr.Port, nil
}

// RefusedURL is an OpenAI-style base URL on loopback where nothing
// listens, so every connection is refused: a dead model server.
func RefusedURL(t testing.TB) string {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/v1", port)
}
