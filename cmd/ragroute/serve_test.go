package main

import (
	"bufio"
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

	"github.com/ragroute/ragroute/internal/ingest/pipeline"
	"github.com/ragroute/ragroute/internal/routeconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

type quiet struct{}

func (quiet) Read(int, int)     {}
func (quiet) Embedded(int, int) {}

// TestServeAnswersFromTheIngestedStore: ingest, then `ragroute serve` on
// the config the operator would render, one turn over HTTP, and a clean
// stop.
func TestServeAnswersFromTheIngestedStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	milvus, err := testenv.StartMilvusLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(milvus.Stop)
	models := testenv.StartModelServer(32)
	t.Cleanup(models.Close)
	models.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		if len(req.Tools) > 0 {
			return testenv.ChatReply{ToolCalls: []testenv.ScriptedToolCall{{Name: "search_knowledge", Arguments: `{"query":"sync options prune last"}`}}}
		}
		return testenv.ChatReply{Content: "Prune last deletes resources after the others are healthy [S1]."}
	}

	milvusCfg := routeconfig.Milvus{URI: milvus.URI, Database: "default", Collection: "docs"}
	embedding := routeconfig.Embedding{BaseURL: models.BaseURL(), Model: "hash", Dimensions: 32, MaxInputTokens: 256}
	if _, err := pipeline.Run(ctx, pipeline.Config{Version: pipeline.ConfigVersion, Store: "docs", Milvus: milvusCfg, Embedding: embedding,
		Chunking: pipeline.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources:  []pipeline.Source{{Name: "docs", Path: "../../internal/ingest/testdata/docs", Principals: []string{"group:staff"}}},
	}, quiet{}); err != nil {
		t.Fatal(err)
	}

	cfg := routeconfig.Config{
		Version: routeconfig.Version, Route: routeconfig.Route{Name: "support", Namespace: "test"}, Server: routeconfig.Server{Port: 8080},
		Prompt: routeconfig.Prompt{Platform: "You are ACME's assistant.", NotFound: "Not in the docs."},
		Store: routeconfig.Store{Name: "docs", Milvus: milvusCfg, Embedding: embedding,
			Search: routeconfig.Search{Primitives: []string{"textDense", "textSparse", "titleDense", "titleSparse"}, Candidates: 12, RRFK: 60}},
		Model:     routeconfig.ChatModel{BaseURL: models.BaseURL(), Name: "scripted", SearchPolicy: "modelDecides"},
		Window:    routeconfig.Window{ContextTokens: 8192, AnswerReserveTokens: 1024},
		Retrieval: routeconfig.Retrieval{SimilarityFloor: 0.05, StrictFloor: 0.05, MaxFragments: 6},
		Rerank:    routeconfig.Rerank{Mode: "rrf"},
		Cache:     routeconfig.Cache{Backend: "memory", TTL: "10m", MaxEntries: 100},
		Turns:     routeconfig.Turns{Backend: "memory", Retention: "10m"},
		Mode:      "singleRound",
		Auth:      routeconfig.Auth{TrustedProxy: &routeconfig.TrustedProxy{UserHeader: "X-User", GroupsHeader: "X-Groups"}},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve(serveCtx, cfg, ln, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	base := "http://" + ln.Addr().String()

	waitReady(t, base)
	req, _ := http.NewRequest("POST", base+"/v1/turns", strings.NewReader(`{"messages":[{"role":"user","content":"What does prune last do?"}]}`))
	req.Header.Set("X-User", "ann")
	req.Header.Set("X-Groups", "staff")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %v %v", resp, err)
	}
	var submitted struct {
		StreamURL string `json:"stream_url"`
	}
	decodeJSON(t, resp.Body, &submitted)

	req, _ = http.NewRequest("GET", base+submitted.StreamURL, nil)
	req.Header.Set("X-User", "ann")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, stream.Body)
	if !strings.Contains(body, "event: retrieval") || !strings.Contains(body, "Prune Last") || !strings.Contains(body, "event: turn.completed") {
		t.Fatalf("stream:\n%s", body)
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve stopped with %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop")
	}

	cfg.Mode = "agentic"
	if err := serve(ctx, cfg, ln, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), `mode "agentic" is not supported yet`) {
		t.Errorf("agentic mode: %v", err)
	}
}

func waitReady(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("route never became ready")
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
	milvus, err := testenv.StartMilvusLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(milvus.Stop)
	golden, err := os.ReadFile("../../internal/controller/testdata/envtest-route-config.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "route.json")
	rendered := strings.NewReplacer("MILVUS_URI", milvus.URI, "NAMESPACE", "acme-rag").Replace(string(golden))
	if err := os.WriteFile(path, []byte(rendered), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := routeconfig.Load(path)
	if err != nil {
		t.Fatalf("the operator's config does not load: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serve(serveCtx, cfg, ln, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// No identity, no turn: the JWT route from the golden refuses it.
	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/turns", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous turn: %v %v", resp, err)
	}
	resp.Body.Close()
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
