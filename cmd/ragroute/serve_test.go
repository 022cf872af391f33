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
	if err := serve(ctx, cfg, os.Getenv, ln, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), `mode "multiRound": want singleRound or agentic`) {
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
	base, _, stop := serveOnLoopback(ctx, t, cfg)
	waitOK(t, base+"/healthz")
	// No identity, no turn: the JWT route from the golden refuses it.
	resp, err := http.Post(base+"/v1/turns", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous turn: %v %v", resp, err)
	}
	resp.Body.Close()
	stop()
}
