package scale

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// envProfile names a folder: when set, the run writes a CPU profile of the
// API server taken while everything is created and turns Ready (50 s from
// the first create, or from -scale.profile-after)
// (kube-apiserver.pprof, where the bed spends most of its CPU, and
// manager-cpu.pprof), and the manager's heap once everything is Ready
// (manager-heap.pprof). Read them
// with `go tool pprof`.
const envProfile = "RAGROUTE_SCALE_PROFILE"

// profileCPU takes CPU profiles of the API server and the manager for d,
// starting after the given delay (-scale.profile-after: costs that grow
// with the world show late in a run), in the background; the returned
// function waits for them and reports a failure.
func profileCPU(ctx context.Context, t *testing.T, admin *rest.Config, m *manager, after, d time.Duration) func() {
	dir := os.Getenv(envProfile)
	if dir == "" {
		return func() {}
	}
	// later runs take one profile in the background once the delay is over.
	later := func(take func() error) <-chan error {
		done := make(chan error, 1)
		go func() {
			select {
			case <-time.After(after):
				done <- take()
			case <-ctx.Done():
				done <- ctx.Err()
			}
		}()
		return done
	}
	apiServer := later(func() error {
		return fetchProfile(ctx, admin, d, filepath.Join(dir, "kube-apiserver.pprof"))
	})
	mgr := later(func() error {
		ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
		defer cancel()
		url := fmt.Sprintf("%s/profile?seconds=%d", m.pprofURL, int(d.Seconds()))
		return fetch(ctx, http.DefaultClient, url, filepath.Join(dir, "manager-cpu.pprof"))
	})
	return func() {
		if err := <-apiServer; err != nil {
			t.Logf("API server profile: %v", err)
		}
		if err := <-mgr; err != nil {
			t.Logf("manager profile: %v", err)
		}
	}
}

// profileManagerHeap writes the manager's heap profile, if profiles are on.
func profileManagerHeap(ctx context.Context, t *testing.T, m *manager) {
	dir := os.Getenv(envProfile)
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := fetch(ctx, http.DefaultClient, m.pprofURL+"/heap", filepath.Join(dir, "manager-heap.pprof")); err != nil {
		t.Logf("manager heap profile: %v", err)
	}
}

func fetchProfile(ctx context.Context, admin *rest.Config, d time.Duration, path string) error {
	httpClient, err := rest.HTTPClientFor(admin)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(admin.Host, "/"), int(d.Seconds()))
	return fetch(ctx, httpClient, url, path)
}

// fetch writes what url answers to path.
func fetch(ctx context.Context, httpClient *http.Client, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return out.Close()
}
