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
	"github.com/ragroute/ragroute/internal/testenv"
)

// TestServeAnswersFromTheIngestedStore: ingest, then `ragroute serve` on
// the config the operator would render, one turn over HTTP, and a clean
// stop.
func TestServeAnswersFromTheIngestedStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
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
	ingestOrFail(t, podconfig.IngestConfig{Version: podconfig.IngestVersion, Store: "docs", Milvus: milvusCfg, Embedding: embedding,
		Chunking: podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources:  []podconfig.Source{{Name: "docs", Path: "../../internal/ingest/testdata/docs", Principals: []string{"group:staff"}}},
	})

	cfg := podconfig.RouteConfig{
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
	}
	t.Setenv("TEST_PROXY_SECRET", "s3cret")
	base, ln, stop := serveOnLoopback(ctx, t, cfg)
	waitOK(t, base+"/readyz")
	submit := func(secret string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/v1/turns", strings.NewReader(`{"messages":[{"role":"user","content":"What does prune last do?"}]}`))
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

	cfg.Mode = podconfig.ModeAgentic
	if err := serve(ctx, cfg, os.Getenv, ln, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), `mode "agentic" is not supported yet`) {
		t.Errorf("agentic mode: %v", err)
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
