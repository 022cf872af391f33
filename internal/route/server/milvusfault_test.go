package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
)

// faultSearchTimeout is the search deadline of the Milvus fault test.
const faultSearchTimeout = 2 * time.Second

// TestMilvusKilledMidTurnIsKnowledgeUnavailable: a route whose Milvus
// dies answers knowledge_unavailable at its search deadline, not after
// the client's own retries give up; the error names no internal address.
func TestMilvusKilledMidTurnIsKnowledgeUnavailable(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Milvus Lite (integration test; skipped with -short)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	milvus, err := testenv.StartMilvusLite(ctx, dir) // this test's own: it kills it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(milvus.Stop)
	client, err := knowledge.Connect(ctx, knowledge.Connection{URI: milvus.URI})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = client.Close(closeCtx)
	})
	store := knowledge.NewStore(client, fmt.Sprintf("f%d", time.Now().UnixNano()%1e12), routetest.Dim)
	models := testenv.StartModelServer(routetest.Dim)
	t.Cleanup(models.Close)
	models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves first.")
	embedder := model.NewEmbeddings(model.EmbeddingsConfig{BaseURL: models.BaseURL(), Model: "hash", Dimensions: routetest.Dim})
	if _, err := store.Ingest(ctx, knowledge.RowsOf(routetest.Rows(t)), embedder, "hash", knowledge.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := routetest.Config(8192)
	cfg.Cache.MaxEntries = 0 // every search reaches Milvus
	cfg.Timeouts.Search = podconfig.Duration(faultSearchTimeout)
	srv := serve(t, routetest.Assemble(t, store, models, cfg, assembly.Parts{}))

	search := func() (int, string) {
		t.Helper()
		resp := do(t, "POST", srv.URL+"/v1/search", "ann", `{"query":"sync waves"}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	if status, body := search(); status != http.StatusOK {
		t.Fatalf("search before the fault: %d %s", status, body)
	}

	milvus.Stop()

	start := time.Now()
	got := turnError(t, srv.URL) // checks the event for internal addresses
	took := time.Since(start)
	t.Logf("Milvus down: turn error %q after %s", got.Code, took)
	if got.Code != turn.CodeKnowledgeUnavailable {
		t.Errorf("error event %+v, want %s", got, turn.CodeKnowledgeUnavailable)
	}
	if limit := faultSearchTimeout + 8*time.Second; took > limit { // a hang detector, not a benchmark
		t.Errorf("the error came after %s, want within %s", took, limit)
	}

	start = time.Now()
	status, body := search()
	took = time.Since(start)
	t.Logf("Milvus down: /v1/search %d after %s", status, took)
	leaks(t, "the search error", body)
	if status != http.StatusBadGateway || !strings.Contains(body, turn.CodeKnowledgeUnavailable) {
		t.Errorf("search: %d %s", status, body)
	}
	if limit := faultSearchTimeout + 8*time.Second; took > limit {
		t.Errorf("the search error came after %s, want within %s", took, limit)
	}
}
