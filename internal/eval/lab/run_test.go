package lab

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/routemanifest"
	"github.com/ragroute/ragroute/internal/testenv"
)

// TestEvalOnTheDevSet runs the whole evaluation with a deterministic
// stand-in embedder: the report has every configuration and sane values.
// Real figures come from `make eval` with a real embedder.
// lexicalReranker is a /rerank stand-in: relevance is the share of the
// query's words a document holds.
func lexicalReranker(requests *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type result struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		words := strings.Fields(strings.ToLower(req.Query))
		var results []result
		for i, d := range req.Documents {
			d = strings.ToLower(d)
			held := 0
			for _, w := range words {
				if strings.Contains(d, w) {
					held++
				}
			}
			results = append(results, result{i, float64(held) / float64(max(len(words), 1))})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"results": results})
	}
}

func TestEvalOnTheDevSet(t *testing.T) {
	var rerankRequests atomic.Int64
	testenv.Integration(t, "Milvus Lite")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	milvus, err := testenv.StartMilvusLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(milvus.Stop)
	client, err := knowledge.Connect(ctx, knowledge.Connection{URI: milvus.URI})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(ctx)
	root := filepath.Join("..", "..", "..", "test", "eval")
	// A slice of the dev set keeps the test short; `make eval` runs them all.
	all, err := os.ReadFile(filepath.Join(root, "dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(all), "\n")
	questions := filepath.Join(t.TempDir(), "questions.jsonl")
	if err := os.WriteFile(questions, []byte(strings.Join(lines[:16], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	reranker := httptest.NewServer(lexicalReranker(&rerankRequests))
	defer reranker.Close()
	report, err := Run(ctx, Options{
		Corpus: filepath.Join(root, "corpus", "argocd"), Questions: []string{questions},
		Client:   func(alias string) *knowledge.Store { return knowledge.NewStore(client, alias, 64) },
		Embedder: &testenv.HashEmbedder{Dim: 64}, Fingerprint: "hash-64",
		Route: sampleRoute(t, reranker.URL), VectorCache: t.TempDir(),
		Rerank: RerankEndpoint{BaseURL: reranker.URL, Model: "lexical", FirstStageWeight: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", Table(report))
	// One row per depth, and one per shorter read at depth 20.
	rerankRows := len(rerankDepths) + len(documentTokens) - 1
	if report.Questions != 16 || len(report.Configs) != 10+rerankRows || report.Baseline != FixedDense || report.Best != RouteDefault {
		t.Fatalf("report %+v", report)
	}
	// One rerank request per question and row: the first-stage weight
	// sweeps reuse the rows' scores, and the shipped row's reranking (the
	// sample route rescores the top 20, reading whole fragments) is the
	// top-20 row's.
	if got := rerankRequests.Load(); got != int64(16*rerankRows) {
		t.Errorf("%d rerank requests, want %d", got, 16*rerankRows)
	}
	for _, depth := range rerankDepths {
		if m := report.Configs[crossEncoderName(depth)]; m.RerankP50Millis <= 0 || m.RerankP95Millis < m.RerankP50Millis {
			t.Errorf("%s: rerank times p50 %g p95 %g", crossEncoderName(depth), m.RerankP50Millis, m.RerankP95Millis)
		}
	}
	// Weights, dominance, minConfidence, per depth the first-stage weight
	// and the relevance floor, and the length read at depth 20, each with
	// whole-set and held-out figures.
	if want := 3 + 2*len(rerankDepths) + 1; len(report.HeldOut) != want {
		t.Errorf("%d cross-validated choices, want %d: %+v", len(report.HeldOut), want, report.HeldOut)
	}
	for _, h := range report.HeldOut {
		if (h.HeldMetrics == nil) == (h.HeldRates == nil) || h.Fits[0] == "" || h.Fits[1] == "" || h.Whole == "" {
			t.Errorf("%s: incomplete %+v", h.Choice, h)
		}
	}
	for name, m := range report.Configs {
		for _, v := range []float64{m.Recall1, m.Recall5, m.Recall10, m.MRR, m.NDCG10, m.IntentAccuracy, m.NotFoundRate} {
			if v < 0 || v > 1 {
				t.Errorf("%s: a metric out of [0,1]: %+v", name, m)
			}
		}
		if m.Recall1 > m.Recall5 || m.Recall5 > m.Recall10 {
			t.Errorf("%s: recall is not monotone in k: %+v", name, m)
		}
	}
	// BM25 alone finds many gold sections of this corpus (0.75 on the whole
	// dev set with this stand-in embedder).
	if report.Configs[TreeHybrid].Recall10 < 0.3 {
		t.Errorf("hybrid search finds too little: %+v", report.Configs[TreeHybrid])
	}
	data, _ := json.Marshal(report)
	if !strings.Contains(string(data), `"recall@1"`) || !strings.Contains(string(data), `"best"`) {
		t.Errorf("JSON shape: %s", data)
	}
}

func TestSweepCountsWhatEachThresholdTurnsIntoNotFound(t *testing.T) {
	gold := "a.md"
	r := &run{questions: []eval.Question{
		{ID: "a1", GoldFile: &gold}, {ID: "a2", GoldFile: &gold}, {ID: "u1"}, {ID: "u2"},
	}}
	values := []float64{0.5, 0.6, 0.1, 0.3}
	c := r.sweep(signal{name: "similarity", thresholds: []float64{0.25, 0.35, 0.55}, value: func(i int) float64 { return values[i] }},
		[]bool{true, false, false, false})
	want := []CurvePoint{
		{Threshold: 0.25, NotFound: 0.5},
		{Threshold: 0.35, NotFound: 1},
		{Threshold: 0.55, NotFound: 1, AnswerableDropped: 0.5, Recall5Lost: 0.5},
	}
	for i, p := range c.Points {
		if p != want[i] {
			t.Errorf("at %.2f: %+v, want %+v", p.Threshold, p, want[i])
		}
	}
	if !strings.Contains(curveTable([]Curve{c}), "unanswerable → not found") {
		t.Error("the curve is not rendered")
	}
}

func TestVectorCacheEmbedsEachTextOnce(t *testing.T) {
	dir := t.TempDir()
	inner := &testenv.HashEmbedder{Dim: 8}
	c, err := newVectorCache(inner, dir, "hash-8")
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Embed(context.Background(), []string{"alpha", "beta"})
	if err != nil || c.save() != nil {
		t.Fatal(err)
	}
	again, err := newVectorCache(inner, dir, "hash-8")
	if err != nil {
		t.Fatal(err)
	}
	second, err := again.Embed(context.Background(), []string{"beta", "gamma", "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if inner.Texts != 3 {
		t.Errorf("embedded %d texts, want 3 (alpha and beta once, gamma once)", inner.Texts)
	}
	if !slices.Equal(second[0], first[1]) || !slices.Equal(second[2], first[0]) {
		t.Error("a cached vector differs from the embedded one")
	}
	other, _ := newVectorCache(inner, dir, "another-embedder")
	if _, err := other.Embed(context.Background(), []string{"alpha"}); err != nil || inner.Texts != 4 {
		t.Errorf("another embedder's cache served alpha (texts %d)", inner.Texts)
	}
}

// sampleRoute is the repository's sample route as the operator renders it,
// its cross-encoder at rerankURL ("": none, the route reranks by fusion).
func sampleRoute(t *testing.T, rerankURL string) podconfig.RouteConfig {
	t.Helper()
	samples := filepath.Join("..", "..", "..", "config", "samples")
	cfg, err := routemanifest.Load(filepath.Join(samples, "v1alpha1_queryroute.yaml"), filepath.Join(samples, "v1alpha1_knowledgestore.yaml"),
		filepath.Join("..", "..", "..", "test", "eval", "platformprompt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if rerankURL == "" {
		cfg.Rerank = podconfig.Rerank{Mode: podconfig.RerankRRF}
	} else {
		ce := *cfg.Rerank.CrossEncoder
		ce.BaseURL, ce.Model = rerankURL, "lexical"
		cfg.Rerank.CrossEncoder = &ce
	}
	return cfg
}
