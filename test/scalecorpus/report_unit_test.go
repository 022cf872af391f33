package scalecorpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sampleReport() *report {
	search := func(p50 float64) map[string]searchFigures {
		out := map[string]searchFigures{}
		for _, kind := range searchKinds {
			out[kind] = searchFigures{P50ms: p50, P95ms: 2 * p50, MilvusCPUms: p50 / 2, Hits: 12}
		}
		return out
	}
	return &report{
		Queries: 5, RouteSearches: 10,
		Rows: []row{
			{Corpus: "argocd 1×", Multiple: 1, Files: 190, Chunks: 3382, Search: search(10),
				Ingest:        ingestFigures{Embedder: hashModel, Concurrency: 2, ChunksPerSecond: 180, PeakRSSMiB: 100},
				Ingests:       []ingestFigures{{Embedder: hashModel, Concurrency: 1, ChunksPerSecond: 100, PeakRSSMiB: 100}},
				EmbedderAlone: []embedderRate{{Embedder: hashModel, Concurrency: 1, ChunksPerSecond: 100}, {Embedder: hashModel, Concurrency: 2, ChunksPerSecond: 1000}}},
			{Corpus: "argocd 2×", Multiple: 2, Files: 380, Chunks: 6766, Search: search(15), Ingest: ingestFigures{PeakRSSMiB: 120}},
			{Corpus: "argocd 10×", Multiple: 10, Files: 1900, Chunks: 33820, Search: search(25), Ingest: ingestFigures{PeakRSSMiB: 200}},
			{Corpus: "opentelemetry", Files: 441, Chunks: 7200, Search: search(40), Ingest: ingestFigures{PeakRSSMiB: 500}},
		},
		Real: []realFigures{
			{Corpus: "argocd, every 4. document", Processes: 1, Ingests: []ingestFigures{{Embedder: "minilm", Concurrency: 1, ChunksPerSecond: 19}},
				Alone: []embedderRate{{Embedder: "minilm", Concurrency: 1, ChunksPerSecond: 20}, {Embedder: "minilm", Concurrency: 2, ChunksPerSecond: 30}}},
			{Corpus: "argocd, every 4. document", Processes: 2, Ingests: []ingestFigures{{Embedder: "minilm", Concurrency: 2, ChunksPerSecond: 40}},
				Alone: []embedderRate{{Embedder: "minilm", Concurrency: 2, ChunksPerSecond: 50}}},
		},
	}
}

// The goals compare the largest Argo CD multiple with 1× (not the other
// corpora), and each ingestion with its own embedder at its own
// concurrency.
func TestGoalsCompareLargestMultipleAndLikeEmbedders(t *testing.T) {
	goals := map[string]goal{}
	for _, g := range sampleReport().goals() {
		goals[g.Goal] = g
	}
	check := func(name string, measured float64, met bool) {
		t.Helper()
		g, ok := goals[name]
		switch {
		case !ok:
			t.Errorf("no goal %q in %v", name, goals)
		case g.Met == nil || *g.Met != met || g.Measured < measured-0.01 || g.Measured > measured+0.01:
			t.Errorf("%s: %+v, want %.2f met=%t", name, g, measured, met)
		}
	}
	check("hybrid-acl search p50 at 10× / 1×", 2.5, false)
	check("ingestion peak RSS at 10× / 1×", 2.0, false)
	check("ingestion rate / embedder alone (hash-384, concurrency 1)", 1.0, true)
	check("ingestion rate / embedder alone (hash-384, concurrency 2)", 0.18, false)
	check("ingestion rate / embedder alone (minilm, concurrency 1, 1 embedder process)", 0.95, true)
	check("ingestion rate / embedder alone (minilm, concurrency 2, 2 embedder processes)", 0.8, false)
	check("hybrid-acl Milvus CPU per search at 10× / 1× (load-independent)", 2.5, false)
	if len(goals) != 4+1+1+2+1+1 {
		t.Errorf("%d goals, want 10: %v", len(goals), goals)
	}
}

// Without a 1× row there is nothing to compare, and nothing is claimed.
func TestGoalsNeedOneTimes(t *testing.T) {
	r := sampleReport()
	r.Rows, r.Real = r.Rows[1:], nil
	if goals := r.goals(); len(goals) != 0 {
		t.Errorf("goals without 1×: %+v", goals)
	}
	if g := ratioGoal("x", 1, 0, 2, true, ""); g.Met != nil {
		t.Errorf("a goal over 0 was judged: %+v", g)
	}
}

// The table has a line per corpus in both tables, the verdicts, and the
// JSON holds the same figures.
func TestReportPrintsAndWritesJSON(t *testing.T) {
	r := sampleReport()
	r.Goals = r.goals()
	var b strings.Builder
	r.print(&b)
	out := b.String()
	for _, want := range []string{"argocd 10×", "33820", "opentelemetry", "hybrid-acl", "25.0 / 50.0, cpu 12.5",
		"≤ 2.00: MISSED", "≥ 0.90: met", "concurrency 2: 1000 chunks/s", "real embedder, 1 embedder process, argocd, every 4. document", "real embedder, 2 embedder processes"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	path := filepath.Join(t.TempDir(), "bench.json")
	if err := r.writeJSON(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var back report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != 4 || back.Rows[2].Search["hybrid-acl"].P50ms != 25 || len(back.Goals) != len(r.Goals) || len(back.Real) != 2 {
		t.Errorf("JSON round trip: %+v", back)
	}
}
