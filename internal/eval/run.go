package eval

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/ingestion"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/sources"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// Configuration names, in the order they are reported.
const (
	FixedDense  = "fixed-1024-dense"
	TreeDense   = "tree-dense"
	TreeHybrid  = "tree-hybrid"
	TreeRoute   = "tree-hybrid-entity-reassembly"
	topK        = 10
	defaultRRFK = 60
)

// Configs lists the ablations, baseline first.
var Configs = []string{FixedDense, TreeDense, TreeHybrid, TreeRoute}

// Options say what to evaluate, and with what.
type Options struct {
	Corpus    string
	Questions string
	Client    StoreFactory
	Embedder  knowledge.Embedder
	// Fingerprint names the embedder, for the collections' generations.
	Fingerprint string
	// Floors of the route, for the not-found rate.
	SimilarityFloor, StrictFloor float64
	// Progress, if set, hears what the run is doing.
	Progress io.Writer
}

// StoreFactory opens a store under an alias.
type StoreFactory func(alias string) *knowledge.Store

// Report is the JSON `make eval` writes.
type Report struct {
	Questions int                `json:"questions"`
	Configs   map[string]Metrics `json:"configs"`
	Baseline  string             `json:"baseline"`
	Best      string             `json:"best"`
	// Floors is printed with the table, not part of the JSON contract.
	Floors []FloorPoint `json:"-"`
}

// Run ingests the corpus twice (fixed windows, heading tree) with the
// embedder and scores every configuration on every question.
func Run(ctx context.Context, opts Options) (Report, error) {
	questions, err := LoadQuestions(opts.Questions)
	if err != nil {
		return Report{}, err
	}
	docs, err := sources.ReadMarkdown(opts.Corpus, []string{"public"})
	if err != nil {
		return Report{}, err
	}
	docs = withoutSourceNotice(docs)
	words := tokenize.NewBERTUncased()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1e9)

	covered := map[string][][]string{}
	var fixed, tree []knowledge.Row
	for _, d := range docs {
		rows, err := fixedRows(d, 1024, 200, words, covered)
		if err != nil {
			return Report{}, fmt.Errorf("%s: %w", d.Source, err)
		}
		fixed = append(fixed, rows...)
		chunks, err := ingest.Chunks(d, ingest.DefaultOptions())
		if err != nil {
			return Report{}, fmt.Errorf("%s: %w", d.Source, err)
		}
		for _, ch := range chunks {
			tree = append(tree, ingestion.RowFromChunk(ch))
		}
	}
	logf(opts.Progress, "corpus: %d documents → %d fixed windows, %d heading-tree chunks\n", len(docs), len(fixed), len(tree))
	fixedStore, treeStore := opts.Client("eval_fixed_"+suffix), opts.Client("eval_tree_"+suffix)
	start, embedding := time.Now(), time.Duration(0)
	for name, set := range map[*knowledge.Store][]knowledge.Row{fixedStore: fixed, treeStore: tree} {
		result, err := name.Ingest(ctx, set, opts.Embedder, opts.Fingerprint, knowledge.SyncOptions{})
		if err != nil {
			return Report{}, err
		}
		embedding += result.Embedding
	}
	logf(opts.Progress, "ingested both chunk sets in %s (embedding %s)\n", time.Since(start).Round(time.Second), embedding.Round(time.Second))
	start = time.Now()

	ranking := &retrieval.Searcher{Index: treeStore, Embedder: opts.Embedder, Reranker: retrieval.KeepOrder{},
		Cache: retrieval.NewMemoryCache(0, time.Minute, time.Now), Generation: func() int64 { return 0 },
		Settings: retrieval.SearchSettings{Candidates: 3 * topK, RRFK: defaultRRFK, MaxFragments: topK}}
	abstaining := *ranking
	abstaining.Settings.SimilarityFloor, abstaining.Settings.StrictFloor = opts.SimilarityFloor, opts.StrictFloor

	scores := map[string]*scorer{}
	for _, c := range Configs {
		scores[c] = &scorer{}
	}
	var answerableSim, unanswerableSim []float64
	for i, q := range questions {
		vectors, err := opts.Embedder.Embed(ctx, []string{q.Question})
		if err != nil {
			return Report{}, err
		}
		search := func(store *knowledge.Store, primitives []knowledge.Primitive) ([]knowledge.Hit, error) {
			return store.HybridSearch(ctx, knowledge.SearchRequest{Query: q.Question, Vector: vectors[0], Principals: []string{"public"},
				Primitives: primitives, Candidates: topK, RRFK: defaultRRFK})
		}
		dense := []knowledge.Primitive{knowledge.TextDense}
		results := map[string][]unit{}
		for name, run := range map[string]func() ([]unit, error){
			FixedDense: func() ([]unit, error) { h, err := search(fixedStore, dense); return units(h, covered), err },
			TreeDense:  func() ([]unit, error) { h, err := search(treeStore, dense); return units(h, nil), err },
			TreeHybrid: func() ([]unit, error) {
				h, err := search(treeStore, nil)
				if q.Answerable() {
					answerableSim = append(answerableSim, bestSimilarity(h))
				} else {
					unanswerableSim = append(unanswerableSim, bestSimilarity(h))
				}
				return units(h, nil), err
			},
			TreeRoute: func() ([]unit, error) {
				r, err := ranking.Search(ctx, q.Question, []string{"public"})
				return fragmentUnits(r.Fragments), err
			},
		} {
			if results[name], err = run(); err != nil {
				return Report{}, fmt.Errorf("question %s, %s: %w", q.ID, name, err)
			}
		}
		abstained := false
		if !q.Answerable() {
			r, err := abstaining.Search(ctx, q.Question, []string{"public"})
			if err != nil {
				return Report{}, err
			}
			abstained = len(r.Fragments) == 0
		}
		for _, name := range Configs {
			s := scores[name]
			if !q.Answerable() {
				s.unanswerable++
				// Only the route's search body has floors: the others always answer.
				if name == TreeRoute && abstained {
					s.abstained++
				}
				continue
			}
			s.rank(firstHit(results[name], q))
			s.intents++
			if string(retrieval.ClassifyIntent(q.Question)) == q.Intent {
				s.intentOK++
			}
		}
		if (i+1)%10 == 0 {
			logf(opts.Progress, "%d/%d questions (%s)\n", i+1, len(questions), time.Since(start).Round(time.Second))
		}
	}

	report := Report{Questions: len(questions), Configs: map[string]Metrics{}, Baseline: FixedDense,
		Floors: floorSweep(answerableSim, unanswerableSim)}
	for _, name := range Configs {
		report.Configs[name] = scores[name].metrics()
		if report.Best == "" || report.Configs[name].NDCG10 > report.Configs[report.Best].NDCG10 {
			report.Best = name
		}
	}
	return report, nil
}

// unit is a retrieved result as scoring sees it.
type unit struct {
	file  string
	paths [][]string
}

func units(hits []knowledge.Hit, covered map[string][][]string) []unit {
	out := make([]unit, len(hits))
	for i, h := range hits {
		paths := [][]string{h.HeadingPath}
		if covered != nil {
			paths = covered[h.ID]
		}
		out[i] = unit{file: h.Source, paths: paths}
	}
	return out
}

func bestSimilarity(hits []knowledge.Hit) float64 {
	best := 0.0
	for _, h := range hits {
		best = max(best, float64(h.Similarity))
	}
	return best
}

func fragmentUnits(fragments []retrieval.Fragment) []unit {
	out := make([]unit, len(fragments))
	for i, f := range fragments {
		out[i] = unit{file: f.Source, paths: [][]string{f.HeadingPath}}
	}
	return out
}

// firstHit is the 1-based rank of the first unit holding the gold section
// in the top 10, or 0.
func firstHit(results []unit, q Question) int {
	for i, u := range results {
		if i >= topK {
			break
		}
		if hit(u.file, u.paths, q) {
			return i + 1
		}
	}
	return 0
}

func withoutSourceNotice(docs []ingest.Document) []ingest.Document {
	var out []ingest.Document
	for _, d := range docs {
		if filepath.Base(d.Source) != "SOURCE.md" {
			out = append(out, d)
		}
	}
	return out
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// Table renders a report for a terminal.
func Table(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-32s %8s %8s %8s %8s %8s %8s %9s\n", "config", "R@1", "R@5", "R@10", "MRR", "nDCG@10", "intent", "notfound")
	for _, name := range Configs {
		m := r.Configs[name]
		mark := ""
		if name == r.Best {
			mark = " *"
		}
		fmt.Fprintf(&b, "%-32s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %9.3f%s\n", name, m.Recall1, m.Recall5, m.Recall10, m.MRR, m.NDCG10, m.IntentAccuracy, m.NotFoundRate, mark)
	}
	fmt.Fprintf(&b, "%d questions; baseline %s; * best nDCG@10\n", r.Questions, r.Baseline)
	b.WriteString(floorTable(r.Floors))
	return b.String()
}
