package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// TestServeAnswersFromTheIngestedStore: ingest, then `ragroute serve` on
// the config the operator would render, one turn over HTTP, and a clean
// stop.
func TestServeAnswersFromTheIngestedStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, _ := pruneRoute(ctx, t)
	base, ln, stop := serveOnLoopback(ctx, t, cfg)
	waitOK(t, base+"/readyz")
	submit := func(secret string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/v1/turns", strings.NewReader(`{"messages":[{"role":"user","content":"What does prune last do?"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-User", "ann")
		req.Header.Set("X-Groups", "staff")
		if secret != "" {
			req.Header.Set("X-Proxy-Secret", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Identity headers from anything but the proxy are not believed.
	for _, forged := range []string{"", "guess"} {
		if resp := submit(forged); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("submit with proxy secret %q: %s, want 401", forged, resp.Status)
		}
	}
	resp, err := submit("s3cret"), error(nil)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %v %v", resp, err)
	}
	var submitted struct {
		StreamURL string `json:"stream_url"`
	}
	decodeJSON(t, resp.Body, &submitted)

	req, _ := http.NewRequest("GET", base+submitted.StreamURL, nil)
	req.Header.Set("X-User", "ann")
	req.Header.Set("X-Proxy-Secret", "s3cret")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, stream.Body)
	if !strings.Contains(body, "event: retrieval") || !strings.Contains(body, "Prune Last") || !strings.Contains(body, "event: turn.completed") {
		t.Fatalf("stream:\n%s", body)
	}

	stop()

	cfg.Mode = "multiRound"
	if err := serve(ctx, cfg, os.Getenv, listeners{api: ln}, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), `mode "multiRound": want singleRound or agentic`) {
		t.Errorf("an unknown mode: %v", err)
	}
}

func readAll(t *testing.T, r io.ReadCloser) string {
	t.Helper()
	defer r.Close()
	var b strings.Builder
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		b.WriteString(scanner.Text() + "\n")
	}
	return b.String()
}

// TestServeLoadsTheOperatorsConfig: the config the operator renders (the
// envtest golden, with the test's Milvus in place of the placeholder)
// starts `ragroute serve` as it is.
func TestServeLoadsTheOperatorsConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	milvus := startMilvus(ctx, t)
	golden, err := os.ReadFile("../../internal/controller/testdata/envtest-route-config.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "route.json")
	rendered := strings.NewReplacer("MILVUS_URI", milvus.URI, "NAMESPACE", "acme-rag").Replace(string(golden))
	if err := os.WriteFile(path, []byte(rendered), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := podconfig.LoadRoute(path)
	if err != nil {
		t.Fatalf("the operator's config does not load: %v", err)
	}
	if cfg.Server.MetricsPort == 0 {
		t.Fatal("the operator's config serves the probes and metrics on the API's port")
	}
	base, probes, stop := serveWithProbesOnLoopback(ctx, t, cfg)
	waitOK(t, probes+"/healthz")
	// Not ready (no index serves the golden's collection), but answering.
	if resp, err := http.Get(probes + "/readyz"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("readiness on the probe port: %v %v, want 503", resp, err)
	} else {
		resp.Body.Close()
	}
	// Each port serves its own paths only.
	for _, url := range []string{base + "/healthz", base + "/readyz", base + "/metrics", probes + "/v1/models"} {
		resp, err := http.Get(url)
		if err != nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %v %v, want 404", url, resp, err)
		}
		if err == nil {
			resp.Body.Close()
		}
	}
	if resp, err := http.Get(probes + "/metrics"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("metrics on the probe port: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// No identity, no turn: the JWT route from the golden refuses it.
	resp, err := http.Post(base+"/v1/turns", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous turn: %v %v", resp, err)
	}
	resp.Body.Close()
	stop()
}

// The operator's config gives the probes and metrics a port of their own;
// a config or a local run without one serves them on the API's, as before;
// the flags override either.
func TestServeListensForProbesWhereTheConfigSays(t *testing.T) {
	for _, tc := range []struct {
		server                podconfig.Server
		listen, metricsListen string
		api, probes           string
	}{
		{podconfig.Server{Port: 8080, MetricsPort: 8081}, "", "", ":8080", ":8081"},
		{podconfig.Server{Port: 8080}, "", "", ":8080", ""},
		{podconfig.Server{Port: 8080, MetricsPort: 8081}, "127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9000", "127.0.0.1:9001"},
		{podconfig.Server{Port: 8080}, "127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9000", "127.0.0.1:9001"},
	} {
		if api, probes := listenAddresses(tc.server, tc.listen, tc.metricsListen); api != tc.api || probes != tc.probes {
			t.Errorf("%+v with --listen=%q --metrics-listen=%q: API on %q, probes on %q; want %q and %q",
				tc.server, tc.listen, tc.metricsListen, api, probes, tc.api, tc.probes)
		}
	}
}

// TestServeFollowsTheStoreToANewEmbedder: the store's embedder changes
// (as a pod of the new config sees it) while the index is still the old
// embedder's; the route searches nothing, answers 503 embedder_mismatch
// naming both, and is not ready; once `ragroute ingest` with the new
// embedder swaps in a generation, the same process serves, unrestarted.
func TestServeFollowsTheStoreToANewEmbedder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, _ := pruneRoute(ctx, t)
	cfg.Store.Embedding.Model = "hash-e5"
	cfg.Store.Embedding.QueryPrefix, cfg.Store.Embedding.DocumentPrefix = "query: ", "passage: "
	base, probes, stop := serveWithProbesOnLoopback(ctx, t, cfg)
	defer stop()
	search := func() (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/v1/search", strings.NewReader(`{"query":"prune last"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-User", "ann")
		req.Header.Set("X-Groups", "staff")
		req.Header.Set("X-Proxy-Secret", "s3cret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	waitStatus := func(url string, want int) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			resp, err := http.Get(url)
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == want {
					return string(body)
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never answered %d (last: %v)", url, want, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	if body := waitStatus(probes+"/readyz", http.StatusServiceUnavailable); !strings.Contains(body, `"embedder"`) {
		t.Errorf("readiness over the old embedder's index: %s, want notReady embedder", body)
	}
	status, body := search()
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "embedder_mismatch") ||
		!strings.Contains(body, `\"hash\" (32 dimensions, no input prefixes)`) || !strings.Contains(body, `\"hash-e5\"`) {
		t.Fatalf("search over the old embedder's index: %d %s, want 503 embedder_mismatch naming both", status, body)
	}

	ingestOrFail(t, pruneIngest(cfg.Store.Milvus, cfg.Store.Embedding))
	waitOK(t, probes+"/readyz")
	if status, body := search(); status != http.StatusOK || !strings.Contains(body, "prune") {
		t.Fatalf("search after the re-ingestion: %d %s, want it served", status, body)
	}
}
