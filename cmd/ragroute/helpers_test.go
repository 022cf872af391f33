package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

// startMilvus starts Milvus Lite for one test; it stops when the test ends.
func startMilvus(ctx context.Context, t *testing.T) *testenv.MilvusLite {
	t.Helper()
	milvus, err := testenv.StartMilvusLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(milvus.Stop)
	return milvus
}

// serveOnLoopback runs `ragroute serve` with cfg on a free loopback port.
// stop cancels it and fails the test if it returns an error or hangs.
func serveOnLoopback(ctx context.Context, t *testing.T, cfg podconfig.RouteConfig) (base string, ln net.Listener, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve(serveCtx, cfg, os.Getenv, ln, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	return "http://" + ln.Addr().String(), ln, func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("serve stopped with %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Fatal("serve did not stop")
		}
	}
}

// waitOK waits until url answers 200.
func waitOK(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never answered 200", url)
}

// ingestOrFail runs `ragroute ingest` on cfg, as the ingest Job would.
func ingestOrFail(t *testing.T, cfg podconfig.IngestConfig) {
	t.Helper()
	data, err := podconfig.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), podconfig.IngestFileName)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"ingest", "--config", path}, &stdout, &stderr); code != 0 {
		t.Fatalf("ragroute ingest: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}
