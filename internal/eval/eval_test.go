package eval

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/testenv"
)

func TestHitIsLenient(t *testing.T) {
	gold := "faq.md"
	q := Question{GoldFile: &gold, GoldHeading: []string{"FAQ", "Redis", "File-based"}}
	cases := []struct {
		file  string
		paths [][]string
		want  bool
	}{
		{"faq.md", [][]string{{"FAQ", "Redis", "File-based"}}, true},
		{"faq.md", [][]string{{"FAQ", "Redis"}}, true},                       // an ancestor holds it
		{"faq.md", [][]string{{"FAQ", "Redis", "File-based", "Keys"}}, true}, // finer split
		{"faq.md", [][]string{{"FAQ", "Other"}}, false},                      // a sibling
		{"other.md", [][]string{{"FAQ", "Redis", "File-based"}}, false},      // another file
		{"faq.md", [][]string{{}}, false},                                    // text under no heading
		{"faq.md", [][]string{{"FAQ", "Other"}, {"FAQ", "Redis"}}, true},     // a window covering several
	}
	for _, tc := range cases {
		if got := hit(tc.file, tc.paths, q); got != tc.want {
			t.Errorf("hit(%s, %v) = %v", tc.file, tc.paths, got)
		}
	}
}

// TestEvalOnTheDevSet runs the whole evaluation with a deterministic
// stand-in embedder: the report has every configuration and sane values.
// Real figures come from `make eval` with a real embedder.
func TestEvalOnTheDevSet(t *testing.T) {
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
	root := filepath.Join("..", "..", "test", "eval")
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
	report, err := Run(ctx, Options{
		Corpus: filepath.Join(root, "corpus", "argocd"), Questions: questions,
		Client:   func(alias string) *knowledge.Store { return knowledge.NewStore(client, alias, 64) },
		Embedder: &testenv.HashEmbedder{Dim: 64}, Fingerprint: "hash-64",
		SimilarityFloor: 0.2, StrictFloor: 0.35,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", Table(report))
	if report.Questions != 16 || len(report.Configs) != 4 || report.Baseline != FixedDense {
		t.Fatalf("report %+v", report)
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

func TestFloorSweepSharesBelowEachFloor(t *testing.T) {
	points := floorSweep([]float64{0.5, 0.6}, []float64{0.1, 0.3})
	at := func(floor float64) FloorPoint {
		for _, p := range points {
			if math.Abs(p.Floor-floor) < 1e-9 {
				return p
			}
		}
		t.Fatalf("no point at %.2f in %+v", floor, points)
		return FloorPoint{}
	}
	if p := at(0.25); p.NotFound != 0.5 || p.AnswerableDropped != 0 {
		t.Errorf("at 0.25: %+v", p)
	}
	if p := at(0.35); p.NotFound != 1 || p.AnswerableDropped != 0 {
		t.Errorf("at 0.35: %+v", p)
	}
	if p := at(0.55); p.NotFound != 1 || p.AnswerableDropped != 0.5 {
		t.Errorf("at 0.55: %+v", p)
	}
	if !strings.Contains(floorTable(points), "unanswerable → not found") {
		t.Error("the sweep is not rendered")
	}
}
