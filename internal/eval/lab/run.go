package lab

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/ingestion"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/lexical"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// Options say what to evaluate, and with what.
type Options struct {
	Corpus string
	// Questions are the question files, read in order.
	Questions []string
	Client    StoreFactory
	// Embedder embeds documents; QueryEmbedder (Embedder when nil) embeds
	// questions, each with the store's input prefix.
	Embedder      knowledge.Embedder
	QueryEmbedder knowledge.Embedder
	// Fingerprint names the embedder, for the collections' generations
	// and the vector cache.
	Fingerprint string
	// VectorCache is a folder where vectors are kept per embedder between
	// runs; empty keeps none.
	VectorCache string
	// Route is the route evaluated: the config the operator renders for
	// the evaluation's manifests, its endpoints the local servers'. Its
	// search body is the `route (shipped)` row, its RRF body the `route`
	// row that the ablations vary; the turns run it whole.
	Route podconfig.RouteConfig
	// Deviations are the settings the evaluation changed from the route as
	// shipped (routemanifest.Deviations), printed with the report.
	Deviations []string
	// Secrets reads the keys the route's config names.
	Secrets assembly.Secrets
	// Concurrency is how many questions are searched at once.
	Concurrency int
	// Peer, if set, is another system's results to score alongside
	// (`make compare`).
	Peer string
	// Rerank, if its BaseURL is set, adds the cross-encoder rows.
	Rerank RerankEndpoint
	// Progress, if set, hears what the run is doing.
	Progress io.Writer
}

// chunking is how the route's store cuts documents: the default options
// in its embedder's tokens.
func (o Options) chunking() ingest.Options {
	opts := ingest.DefaultOptions()
	opts.Tokens, _ = tokenize.ForEmbedder(o.Route.Store.Embedding.Tokenizer)
	return opts
}

// StoreFactory opens a store under an alias.
type StoreFactory func(alias string) *knowledge.Store

// Report is the JSON `make eval` writes.
type Report struct {
	// Route names the route evaluated; Deviations are the settings the
	// evaluation changed from it as shipped.
	Route      string                  `json:"route"`
	Deviations []string                `json:"deviations"`
	Questions  int                     `json:"questions"`
	Configs    map[string]eval.Metrics `json:"configs"`
	Baseline   string                  `json:"baseline"`
	// Best is the configuration the route uses by default.
	Best string `json:"best"`
	// Weights are the fusion weights that served the route body best.
	Weights map[knowledge.Primitive]float64 `json:"best_weights"`
	// Order lists the configurations as the table shows them.
	Order []string `json:"-"`
	// Curves say what each not-found signal would do at each threshold.
	Curves []Curve `json:"notfound_curves"`
	// HeldOut are the choices made on the whole set and by 2-fold
	// cross-validation.
	HeldOut []HeldOut `json:"held_out"`
	// Misses explain the route body's questions without a hit in the top 5.
	Misses []Miss `json:"-"`
	// Ingestion holds every system's ingestion on a corpus without
	// questions, and otherwise the peer configurations whose ingestion
	// failed (they have no scores).
	Ingestion []IngestionRow `json:"ingestion,omitempty"`
	// Seconds is the run's wall time.
	Seconds float64 `json:"seconds"`
}

// run is one evaluation's shared state.
type run struct {
	opts      Options
	questions []eval.Question
	gold      eval.Gold
	tokens    tokenize.Counter
	fixed     *knowledge.Store
	tree      *knowledge.Store
	index     *listIndex
	vectors   map[string][]float32
	query     knowledge.Embedder
	source    string
	// background is the embedder's similarity between questions and
	// unrelated chunks of this corpus, measured at ingestion.
	background knowledge.Background
	// rerankCache keeps the cross-encoder's answers for the sweeps.
	rerankCache *responseCache
}

// Run ingests the corpus twice (fixed windows, heading tree) with the
// embedder and scores every configuration on every question. Without
// questions it measures ingestion only (ingestOnly).
func Run(ctx context.Context, opts Options) (Report, error) {
	began := time.Now()
	questions, err := eval.LoadQuestions(opts.Questions...)
	if err != nil {
		return Report{}, err
	}
	var peers []peer
	if opts.Peer != "" {
		if peers, err = loadPeer(opts.Peer, questions); err != nil {
			return Report{}, err
		}
	}
	if len(questions) == 0 {
		return ingestOnly(ctx, opts, peers, began)
	}
	r, err := prepareQuestions(ctx, opts, questions)
	if err != nil {
		return Report{}, err
	}
	report := Report{Questions: len(r.questions), Configs: map[string]eval.Metrics{}, Baseline: FixedDense, Best: RouteDefault,
		Route: routeName(opts.Route), Deviations: opts.Deviations}
	configs := r.configs()
	outcomes, err := r.searchAll(ctx, configs)
	if err != nil {
		return Report{}, err
	}
	weightOptions, grid, err := r.weightOptions(ctx)
	if err != nil {
		return Report{}, err
	}
	weights, best := r.crossValidateRanking("fusion weights (spec.search.weights)", weightOptions)
	report.Weights = grid[best]
	weighted := r.routeConfig(RouteWeighted, r.fusionRoute(report.Weights), nil)
	configs, outcomes[weighted.name] = append(configs, weighted), weightOptions[best].outcomes
	dominanceOptions, err := r.dominanceOptions(ctx)
	if err != nil {
		return Report{}, err
	}
	dominance, _ := r.crossValidateRanking("retrieval.diversity.dominance", dominanceOptions)
	report.HeldOut = append(report.HeldOut, weights, dominance,
		r.crossValidateFloor("retrieval.minConfidence", confidenceSignal(outcomes[RouteDefault]), r.hitAt5(outcomes[RouteDefault])))
	if err := r.timeRouteBody(ctx, outcomes[RouteDefault]); err != nil {
		return Report{}, err
	}
	if opts.Rerank.BaseURL != "" {
		rows, err := r.crossEncoderRows(ctx, &report, outcomes)
		if err != nil {
			return Report{}, err
		}
		configs = append(configs, rows...)
	}
	shipped := r.shippedConfig()
	more, err := r.searchAll(ctx, []config{shipped})
	if err != nil {
		return Report{}, err
	}
	outcomes[shipped.name] = more[shipped.name]
	at := len(configs) // after the route's row, which the ablations vary
	for i, c := range configs {
		if c.name == RouteDefault {
			at = i + 1
		}
	}
	configs = slices.Insert(configs, at, shipped)
	for _, c := range configs {
		report.Order = append(report.Order, c.name)
		m := r.gold.Score(r.questions, outcomes[c.name], r.tokens, r.intentOK)
		m.RerankP50Millis, m.RerankP95Millis = rerankTimes(outcomes[c.name])
		report.Configs[c.name] = m
	}
	for _, p := range peers {
		if p.failed() {
			report.Ingestion = append(report.Ingestion, p.ingestion)
			continue
		}
		report.Order = append(report.Order, p.name)
		report.Configs[p.name] = r.gold.Score(r.questions, p.outcomes, r.tokens, r.intentOK)
	}
	report.Curves = append(r.notFoundCurves(outcomes[RouteDefault]), report.Curves...)
	report.Misses = r.misses(outcomes[RouteDefault], outcomes[TreeHybrid])
	report.Seconds = time.Since(began).Seconds()
	return report, nil
}

// prepare loads the questions and corpus, ingests both chunk sets and
// embeds every question once.
func prepare(ctx context.Context, opts Options) (*run, error) {
	questions, err := eval.LoadQuestions(opts.Questions...)
	if err != nil {
		return nil, err
	}
	return prepareQuestions(ctx, opts, questions)
}

// prepareQuestions is prepare with the questions already loaded: the
// agentic evaluation scores each part of a question as a question of its
// own (eval.PartQuestions).
func prepareQuestions(ctx context.Context, opts Options, questions []eval.Question) (*run, error) {
	// The source's name is the corpus folder's, as ingestion names it.
	source := filepath.Base(filepath.Clean(opts.Corpus))
	docs, err := eval.ReadCorpus(opts.Corpus, source)
	if err != nil {
		return nil, err
	}
	gold, err := eval.NewGold(source, docs, questions)
	if err != nil {
		return nil, err
	}
	r := &run{opts: opts, questions: questions, gold: gold, tokens: tokenize.NewBERTUncased(),
		source: source, rerankCache: &responseCache{seen: map[string][]byte{}}}
	if opts.Concurrency <= 0 {
		r.opts.Concurrency = 4
	}
	var fixed, tree []knowledge.Row
	for _, d := range docs {
		rows, err := fixedRows(d, 1024, 200, r.tokens)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Source, err)
		}
		fixed = append(fixed, rows...)
		chunks, err := ingest.Chunks(d, opts.chunking())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Source, err)
		}
		for _, ch := range chunks {
			tree = append(tree, ingestion.RowFromChunk(ch))
		}
	}
	logf(opts.Progress, "corpus: %d documents → %d fixed windows, %d heading-tree chunks\n", len(docs), len(fixed), len(tree))

	documents, err := newVectorCache(opts.Embedder, opts.VectorCache, opts.Fingerprint+"\x00document")
	if err != nil {
		return nil, err
	}
	query := opts.QueryEmbedder
	if query == nil {
		query = opts.Embedder
	}
	queries, err := newVectorCache(query, opts.VectorCache, opts.Fingerprint+"\x00query")
	if err != nil {
		return nil, err
	}
	r.query = query
	suffix := strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	// The stores prepare keyword-search text as the route's store does.
	analyzer, err := lexical.New(opts.Route.Store.Search.Lexical.LanguageNames())
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	r.fixed = opts.Client("eval_fixed_" + suffix).WithAnalyzer(analyzer)
	r.tree = opts.Client("eval_tree_" + suffix).WithAnalyzer(analyzer)
	logf(opts.Progress, "keyword search: %s\n", analyzer.ID())
	start, embedding := time.Now(), time.Duration(0)
	for _, set := range []struct {
		store *knowledge.Store
		rows  []knowledge.Row
	}{{r.fixed, fixed}, {r.tree, tree}} {
		// The tree store measures its background similarity, as
		// ingestion does, for the relative floors.
		result, err := set.store.Ingest(ctx, knowledge.RowsOf(set.rows), documents, opts.Fingerprint,
			knowledge.SyncOptions{BatchSize: 128, Concurrency: 4, QueryEmbedder: queries})
		if err != nil {
			return nil, err
		}
		embedding += result.Embedding
		if set.store == r.tree && result.Background != nil {
			r.background = *result.Background
		}
	}
	for _, c := range []*vectorCache{documents, queries} {
		if err := c.save(); err != nil {
			return nil, err
		}
	}
	logf(opts.Progress, "ingested both chunk sets in %s (embedding %s, %d texts not in the vector cache); background similarity %.3f ± %.3f\n",
		time.Since(start).Round(time.Second), embedding.Round(time.Second), documents.added, r.background.Mean, r.background.StdDev)

	start = time.Now()
	texts := make([]string, len(questions))
	for i, q := range questions {
		texts[i] = q.Question
	}
	r.vectors = map[string][]float32{}
	for i := 0; i < len(texts); i += 32 {
		batch := texts[i:min(i+32, len(texts))]
		vectors, err := queries.Embed(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("embed the questions: %w", err)
		}
		for j, v := range vectors {
			r.vectors[batch[j]] = v
		}
	}
	if err := queries.save(); err != nil {
		return nil, err
	}
	if r.index, err = newListIndex(ctx, r.tree, questions, r.vectors, searchDepth, r.opts.Concurrency); err != nil {
		return nil, err
	}
	logf(opts.Progress, "embedded %d questions and fetched each primitive's ranking in %s\n", len(questions), time.Since(start).Round(time.Millisecond))
	return r, nil
}

// searchAll runs every configuration on every question, several questions
// at once.
func (r *run) searchAll(ctx context.Context, configs []config) (map[string][]eval.Outcome, error) {
	return r.searchAllAt(ctx, configs, r.opts.Concurrency)
}

// searchAllAt is searchAll with concurrency questions at once.
func (r *run) searchAllAt(ctx context.Context, configs []config, concurrency int) (map[string][]eval.Outcome, error) {
	out := map[string][]eval.Outcome{}
	for _, c := range configs {
		out[c.name] = make([]eval.Outcome, len(r.questions))
	}
	group, ctx := errgroup.WithContext(ctx)
	group.SetLimit(concurrency)
	for i, q := range r.questions {
		group.Go(func() error {
			for _, c := range configs {
				start := time.Now()
				o, err := c.search(ctx, q)
				if err != nil {
					return fmt.Errorf("question %s, %s: %w", q.ID, c.name, err)
				}
				if c.timed {
					o.Elapsed = time.Since(start)
				}
				out[c.name][i] = o
			}
			return nil
		})
	}
	return out, group.Wait()
}

func (r *run) intentOK(q eval.Question) bool { return eval.IntentMatches(q) }

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}
