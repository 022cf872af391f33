package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// probeServer serves opts over loopback with what /readyz and /metrics need.
func probeServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts.Log = turnlog.NewMemory(time.Minute, 10, 0, time.Now)
	opts.Auth = identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}
	opts.Limits = DefaultLimits()
	srv := httptest.NewServer(New(ctx, opts).Handler())
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// /readyz is unauthenticated: it names the dependency that is not ready,
// never its error, which carries internal addresses.
func TestReadyzNamesTheDependencyNotItsError(t *testing.T) {
	const internalURL = "http://milvus-0.data.svc.cluster.local:19530"
	srv := probeServer(t, Options{Ready: func(context.Context) error {
		return &NotReadyError{Dependency: "milvus", Err: errors.New("dial " + internalURL + ": connection refused")}
	}})
	status, body := get(t, srv.URL+"/readyz")
	if strings.Contains(body, internalURL) || strings.Contains(body, "connection refused") {
		t.Errorf("/readyz shows the error: %s", body)
	}
	var got readiness
	err := json.Unmarshal([]byte(body), &got)
	if err != nil || status != http.StatusServiceUnavailable || got.Ready || len(got.NotReady) != 1 || got.NotReady[0] != "milvus" {
		t.Errorf(`/readyz: %d %s (%v), want 503 {"ready":false,"notReady":["milvus"]}`, status, body, err)
	}
}

// The chat model is shared by every replica: when it blips, each replica
// stays ready (search and cached answers still work) and the outage shows
// in ragroute_model_up instead.
func TestModelDownKeepsTheReplicaReadyAndShowsInTheMetric(t *testing.T) {
	var modelDown atomic.Bool
	modelDown.Store(true)
	srv := probeServer(t, Options{
		Ready: func(context.Context) error { return nil },
		ModelHealth: func(context.Context) error {
			if modelDown.Load() {
				return errors.New("chat model at http://vllm.models.svc:8000: connection refused")
			}
			return nil
		},
		ModelCheckEvery: 20 * time.Millisecond,
	})
	waitForMetric(t, srv.URL, "ragroute_model_up 0")
	if status, body := get(t, srv.URL+"/readyz"); status != http.StatusOK || strings.TrimSpace(body) != `{"ready":true}` {
		t.Errorf("/readyz with the model down: %d %s, want 200 ready", status, body)
	}
	modelDown.Store(false)
	waitForMetric(t, srv.URL, "ragroute_model_up 1")
}

func waitForMetric(t *testing.T, base, line string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, body := get(t, base+"/metrics")
		if strings.Contains(body, "\n"+line+"\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in /metrics:\n%s", line, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// /readyz is unauthenticated and each check costs Milvus round trips: the
// probes that arrive while a check runs share it, and so do those within
// a second after; only then does a probe make a new check.
func TestConcurrentProbesShareOneReadinessCheck(t *testing.T) {
	var checks atomic.Int32
	started, gate := make(chan struct{}, 100), make(chan struct{})
	clock := newTestClock()
	srv := probeServer(t, Options{Now: clock.now, Ready: func(context.Context) error {
		checks.Add(1)
		started <- struct{}{}
		<-gate
		return nil
	}})
	const probes = 50
	statuses := make(chan int, probes)
	for range probes {
		go func() {
			resp, err := http.Get(srv.URL + "/readyz")
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	<-started // one check runs; the probes arriving meanwhile wait for it
	close(gate)
	for range probes {
		if status := <-statuses; status != http.StatusOK {
			t.Errorf("a probe answered %d", status)
		}
	}
	if n := checks.Load(); n != 1 {
		t.Errorf("%d probes made %d checks, want 1", probes, n)
	}
	clock.advance(2 * readyMemoFor)
	if status, _ := get(t, srv.URL+"/readyz"); status != http.StatusOK || checks.Load() != 2 {
		t.Errorf("a probe after the result aged: %d with %d checks, want a second check", status, checks.Load())
	}
}

// On their own port the probes and the scraper reach only health,
// readiness and metrics, and the API's port serves none of them; on one
// port (Handler) both are served, as before.
func TestProbesAndMetricsHaveTheirOwnHandler(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server := New(ctx, Options{Log: turnlog.NewMemory(time.Minute, 10, 0, time.Now), Limits: DefaultLimits(),
		Auth: identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, ModelID: "route",
		Ready: func(context.Context) error { return nil }})
	api, probes, both := httptest.NewServer(server.APIHandler()), httptest.NewServer(server.ProbeHandler()), httptest.NewServer(server.Handler())
	for _, srv := range []*httptest.Server{api, probes, both} {
		defer srv.Close()
	}
	for _, tc := range []struct {
		path                 string
		onAPI, onProbes, one int
	}{
		{"/healthz", 404, 200, 200},
		{"/readyz", 404, 200, 200},
		{"/metrics", 404, 200, 200},
		{"/v1/models", 200, 404, 200},
	} {
		for _, port := range []struct {
			name string
			srv  *httptest.Server
			want int
		}{{"API", api, tc.onAPI}, {"probe", probes, tc.onProbes}, {"single", both, tc.one}} {
			resp := do(t, "GET", port.srv.URL+tc.path, "ann", "")
			resp.Body.Close()
			if resp.StatusCode != port.want {
				t.Errorf("GET %s on the %s port: %d, want %d", tc.path, port.name, resp.StatusCode, port.want)
			}
		}
	}
	// A request on the API port still counts in the probe port's metrics.
	if _, body := get(t, probes.URL+"/metrics"); !strings.Contains(body, `ragroute_http_requests_total{code="200",handler="/v1/models"`) {
		t.Errorf("the API's requests are not in /metrics:\n%.2000s", body)
	}
}
