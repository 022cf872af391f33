package e2e

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// gitServer serves bare repositories over git's smart HTTP protocol
// (git http-backend) behind basic auth, as a private forge would.
type gitServer struct {
	URL      string
	server   *http.Server
	listener net.Listener
}

// startGitServer serves dir/<name>.git on addr for user and password.
func startGitServer(t *testing.T, addr, dir, user, password string) *gitServer {
	t.Helper()
	backend := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend",
		Env: []string{"GIT_PROJECT_ROOT=" + dir, "GIT_HTTP_EXPORT_ALL=1"}}
	if _, err := os.Stat(backend.Path); err != nil {
		t.Fatalf("git http-backend: %v (Debian's git package has it)", err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("git server: %v", err)
	}
	s := &gitServer{URL: "http://" + listener.Addr().String(), listener: listener,
		server: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.server.Serve(listener) }()
	t.Cleanup(func() { _ = s.server.Close() })
	return s
}

// gitRepo makes dir/<name>.git, a bare repository on branch main whose
// one commit holds files (path → content).
func gitRepo(t *testing.T, dir, name string, files map[string]string) {
	t.Helper()
	work := t.TempDir()
	for path, content := range files {
		full := filepath.Join(work, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bare := filepath.Join(dir, name+".git")
	for _, args := range [][]string{
		{"-C", work, "init", "-q", "-b", "main"},
		{"-C", work, "add", "."},
		{"-C", work, "-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "commit", "-q", "-m", "docs"},
		{"clone", "-q", "--bare", work, bare},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	fmt.Fprintf(os.Stderr, "e2e: git repository %s\n", bare)
}
