package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// TestServeFindsAnotherInflectionByKeyword: `ragroute ingest` and `ragroute
// serve` with the store's languages (Russian and English) stem a Russian
// page and a question in another inflection alike, so a keyword-only
// search finds «скидка» for «скидкой» over Milvus Lite; a route whose
// config names no languages over that index is refused with 503
// analyzer_mismatch naming both analyzers.
func TestServeFindsAnotherInflectionByKeyword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, _ := pruneRoute(ctx, t)
	dir := t.TempDir()
	for name, content := range map[string]string{
		"discounts.md": "# Льготы\n\nСотрудникам положена скидка на обучение и конференции.\n",
		"leave.md":     "# Отпуск\n\nОтпуск согласуют с руководителем за две недели.\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	both := podconfig.Lexical{Languages: []podconfig.Language{podconfig.LanguageEnglish, podconfig.LanguageRussian}}
	cfg.Store.Milvus.Collection = "pages"
	ingestOrFail(t, podconfig.IngestConfig{Version: podconfig.IngestVersion, Store: "pages", Milvus: cfg.Store.Milvus,
		Embedding: cfg.Store.Embedding, Chunking: podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Lexical: both, Sources: []podconfig.Source{{Name: "pages", Path: dir, Principals: []string{"group:staff"}}}})
	// Keyword search alone, no floor: only shared terms can find a page.
	cfg.Store.Search = podconfig.Search{Primitives: []string{"textSparse"}, Candidates: 12, RRFK: 60, Lexical: both}
	cfg.Retrieval.SimilarityFloor, cfg.Retrieval.StrictFloor = 0, 0

	search := func(base, query string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/v1/search", strings.NewReader(`{"query":"`+query+`"}`))
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

	base, probes, stop := serveWithProbesOnLoopback(ctx, t, cfg)
	waitOK(t, probes+"/readyz")
	status, body := search(base, "Какие скидкой положены?")
	if status != http.StatusOK || !strings.Contains(body, "pages/discounts.md") || strings.Contains(body, "pages/leave.md") {
		t.Errorf("«скидкой» by keyword: %d %s, want pages/discounts.md alone", status, body)
	}
	if !strings.Contains(body, "положена скидка на обучение") {
		t.Errorf("the fragment does not show the page's own words: %s", body)
	}
	stop()

	cfg.Store.Search.Lexical = podconfig.Lexical{Languages: []podconfig.Language{}}
	base, probes, stop = serveWithProbesOnLoopback(ctx, t, cfg)
	defer stop()
	if ready := notReadyBody(t, probes+"/readyz"); !strings.Contains(ready, `"analyzer"`) {
		t.Errorf("readiness over another analyzer's index: %s, want notReady analyzer", ready)
	}
	status, body = search(base, "скидкой")
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "analyzer_mismatch") ||
		!strings.Contains(body, `\"snowball:russian+english/v1\"`) || !strings.Contains(body, `\"none\"`) {
		t.Errorf("a route without stemming over the stemmed index: %d %s, want 503 analyzer_mismatch naming both", status, body)
	}
}

// notReadyBody waits for url to answer 503 and returns its body.
func notReadyBody(t *testing.T, url string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				return string(body)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered 503 (last: %v)", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
