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
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

// startMilvus starts Milvus Lite for one test; it stops when the test ends.
func startMilvus(ctx context.Context, t *testing.T) *testenv.MilvusLite {
	t.Helper()
	testenv.Integration(t, "Milvus Lite")
	milvus, err := testenv.StartMilvusLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(milvus.Stop)
	return milvus
}

// serveOnLoopback runs `ragroute serve` with cfg on a free loopback port,
// its probes and metrics too. stop cancels it and fails the test if it
// returns an error or hangs.
func serveOnLoopback(ctx context.Context, t *testing.T, cfg podconfig.RouteConfig) (base string, ln net.Listener, stop func()) {
	t.Helper()
	ln = listenOnLoopback(t)
	return "http://" + ln.Addr().String(), ln, serveOn(ctx, t, cfg, listeners{api: ln})
}

// serveWithProbesOnLoopback runs `ragroute serve` with cfg as in a pod:
// the API on one free loopback port, its probes and metrics on another.
func serveWithProbesOnLoopback(ctx context.Context, t *testing.T, cfg podconfig.RouteConfig) (base, probes string, stop func()) {
	t.Helper()
	ln := listeners{api: listenOnLoopback(t), probes: listenOnLoopback(t)}
	return "http://" + ln.api.Addr().String(), "http://" + ln.probes.Addr().String(), serveOn(ctx, t, cfg, ln)
}

func listenOnLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serveOn runs `ragroute serve` with cfg on ln; the returned stop cancels
// it and fails the test if it returns an error or hangs.
func serveOn(ctx context.Context, t *testing.T, cfg podconfig.RouteConfig, ln listeners) (stop func()) {
	t.Helper()
	serveCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve(serveCtx, cfg, os.Getenv, ln, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	return func() {
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

// pruneRoute ingests internal/ingest/testdata/docs into a fresh Milvus
// Lite and returns the config of a route over it, with a scripted model
// that searches "sync options prune last" and answers from it, behind a
// trusted proxy whose secret is "s3cret".
func pruneRoute(ctx context.Context, t *testing.T) (podconfig.RouteConfig, *testenv.ModelServer) {
	t.Helper()
	milvus := startMilvus(ctx, t)
	models := testenv.StartModelServer(32)
	t.Cleanup(models.Close)
	models.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		if len(req.Tools) > 0 {
			return testenv.ChatReply{ToolCalls: []testenv.ScriptedToolCall{{Name: "search_knowledge", Arguments: `{"query":"sync options prune last"}`}}}
		}
		return testenv.ChatReply{Content: "Prune last deletes resources after the others are healthy [S1]."}
	}
	milvusCfg := podconfig.Milvus{URI: milvus.URI, Database: "default", Collection: "docs"}
	embedding := podconfig.Embedding{BaseURL: models.BaseURL(), Model: "hash", Dimensions: 32, MaxInputTokens: 256}
	ingestOrFail(t, pruneIngest(milvusCfg, embedding))
	t.Setenv("TEST_PROXY_SECRET", "s3cret")
	return podconfig.RouteConfig{
		Version: podconfig.RouteVersion, Route: podconfig.RouteRef{Name: "support", Namespace: "test"}, Server: podconfig.Server{Port: 8080},
		Prompt: podconfig.Prompt{Platform: "You are ACME's assistant.", NotFound: "Not in the docs."},
		Store: podconfig.Store{Name: "docs", Milvus: milvusCfg, Embedding: embedding,
			Search: podconfig.Search{Primitives: []string{"textDense", "textSparse", "titleDense", "titleSparse"}, Candidates: 12, RRFK: 60}},
		Model:     podconfig.ChatModel{BaseURL: models.BaseURL(), Name: "scripted", SearchPolicy: "modelDecides"},
		Window:    podconfig.Window{ContextTokens: 8192, AnswerReserveTokens: 1024},
		Retrieval: podconfig.Retrieval{SimilarityFloor: 0.05, StrictFloor: 0.05, MaxFragments: 6},
		Rerank:    podconfig.Rerank{Mode: "rrf"},
		Cache:     podconfig.Cache{Backend: "memory", TTL: podconfig.Duration(10 * time.Minute), MaxEntries: 100},
		Turns:     podconfig.Turns{Backend: "memory", Retention: podconfig.Duration(10 * time.Minute)},
		Mode:      "singleRound",
		Auth: podconfig.Auth{TrustedProxy: &podconfig.TrustedProxy{UserHeader: "X-User", GroupsHeader: "X-Groups",
			SecretHeader: "X-Proxy-Secret", SecretEnv: "TEST_PROXY_SECRET"}},
	}, models
}

// pruneIngest is pruneRoute's ingestion into milvus with embedding.
func pruneIngest(milvus podconfig.Milvus, embedding podconfig.Embedding) podconfig.IngestConfig {
	return podconfig.IngestConfig{Version: podconfig.IngestVersion, Store: "docs", Milvus: milvus, Embedding: embedding,
		Chunking: podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		// The source grants what frontmatter-acl.md narrows to.
		Sources: []podconfig.Source{{Name: "docs", Path: "../../internal/ingest/testdata/docs",
			Principals: []string{"group:staff", "group:sre", "user:alice"}}},
	}
}

// askPruneLast asks pruneRoute's question as ann (group staff) through
// the trusted proxy, with extra headers on the submit, and returns the
// turn's whole event stream.
func askPruneLast(t *testing.T, base string, extra map[string]string) string {
	t.Helper()
	identity := map[string]string{"X-User": "ann", "X-Groups": "staff", "X-Proxy-Secret": "s3cret"}
	req, _ := http.NewRequest("POST", base+"/v1/turns", strings.NewReader(`{"messages":[{"role":"user","content":"What does prune last do?"}]}`))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range identity {
		req.Header.Set(k, v)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %v %v", resp, err)
	}
	var submitted struct {
		StreamURL string `json:"stream_url"`
	}
	decodeJSON(t, resp.Body, &submitted)
	events, _ := http.NewRequest("GET", base+submitted.StreamURL, nil)
	for k, v := range identity {
		events.Header.Set(k, v)
	}
	stream, err := http.DefaultClient.Do(events)
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, stream.Body)
}
