package scalecorpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/ingestion"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/routemanifest"
	"github.com/ragroute/ragroute/internal/testenv"
)

// The defaults are the bounded run of `make test`; make bench-scale passes
// -scalecorpus.multiples=1,2,5,10 -scalecorpus.otel=… and more queries.
var (
	multiplesFlag = flag.String("scalecorpus.multiples", "1,2", "multiples of the Argo CD corpus to measure (comma-separated)")
	otelDir       = flag.String("scalecorpus.otel", "", "the OpenTelemetry docs; empty: those rows are not measured")
	queries       = flag.Int("scalecorpus.queries", 6, "searches timed per kind and size (the dev questions, in turn)")
	routeSearches = flag.Int("scalecorpus.route-searches", 10, "/v1/search calls the route answers before its RSS is read")
	concurrency1  = flag.Bool("scalecorpus.concurrency-1", false, "also ingest 1× with one batch in flight (the default is two)")
	realURL       = flag.String("scalecorpus.embedding-base-url", "", "a real embedder's OpenAI-compatible base URL (…/v1): adds 1× ingestions through it and its rate alone")
	realURL2      = flag.String("scalecorpus.embedding-base-url-2", "", "a second process of the same embedder (…/v1): the real ingestions again, through both in turn")
	realModel     = flag.String("scalecorpus.embedding-model", "all-MiniLM-L6-v2", "the real embedder's model name")
	realEvery     = flag.Int("scalecorpus.real-every", 4, "the real embedder ingests every n-th Argo CD document (it embeds some 30 inputs/s on one thread)")
	realMaxTokens = flag.Int("scalecorpus.max-input-tokens", 256, "the real embedder's input limit")
)

const (
	argocdCorpus = "../eval/corpus/argocd"
	devQuestions = "../eval/dev.jsonl"
	// routeManifests is hack/perf's route: a QueryRoute with the
	// operator's defaults, rendered by the operator's renderer.
	routeManifests = "../../hack/perf/route.yaml"
	// collection is the alias every size is ingested under (hack/perf's,
	// the route's KnowledgeStore's); each size has its own Milvus Lite.
	collection = "perf_docs"
	storeName  = "perf"
	dim        = 384
	// hashModel names the hashing embedder in the configs.
	hashModel = "hash-384"
	// candidates and rrfK are internal/knowledge's BenchmarkSearch's.
	candidates = 12
	rrfK       = 60
)

// everyone reads both sources; staff is a public user outside group:ops.
var (
	everyone = []string{"public", "group:ops"}
	staff    = []string{"group:staff", "public"}
)

func TestCorpusScale(t *testing.T) {
	if os.Getenv(testenv.EnvMilvusLite) == "" {
		t.Skipf("%s is unset: run `make test` or `make bench-scale`, which install Milvus Lite (hack/milvus-lite.sh)", testenv.EnvMilvusLite)
	}
	testenv.Integration(t, "Milvus Lite")
	multiples, err := parseMultiples(*multiplesFlag)
	if err != nil {
		t.Fatal(err)
	}
	r := &report{Queries: *queries, RouteSearches: *routeSearches, LoadAverage: [2]string{loadAverage()}}
	otel := *otelDir
	if otel != "" {
		if _, err := os.Stat(otel); err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("the OpenTelemetry rows are left out: %v", err))
			otel = ""
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	bin := ragrouteBinary(t)
	model := testenv.StartModelServer(dim)
	defer model.Close()
	questions, err := eval.LoadQuestions(devQuestions)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, q := range questions {
		texts = append(texts, q.Question)
	}
	hash := podconfig.Embedding{BaseURL: model.BaseURL(), Model: hashModel, Dimensions: dim, MaxInputTokens: 256}
	for _, c := range corpora(argocdCorpus, multiples, otel) {
		row := measure(ctx, t, bin, c, hash, texts)
		r.Rows = append(r.Rows, row)
		r.save(t) // a long run that is cut short keeps what it measured
		t.Logf("%s: %d files, %d chunks; ingest %.1f s (%.0f chunks/s, peak RSS %.0f MiB); hybrid-acl p50 %.1f ms, Milvus CPU %.1f ms per search; route RSS %.0f MiB",
			row.Corpus, row.Files, row.Chunks, row.Ingest.Seconds, row.Ingest.ChunksPerSecond, row.Ingest.PeakRSSMiB,
			row.Search["hybrid-acl"].P50ms, row.Search["hybrid-acl"].MilvusCPUms, row.Route.RSSMiB)
	}
	if e, ok := realEmbedding(); ok {
		r.Real = append(r.Real, measureReal(ctx, t, bin, e, 1))
		if *realURL2 != "" {
			e.BaseURL = roundRobin(t, *realURL, *realURL2)
			r.Real = append(r.Real, measureReal(ctx, t, bin, e, 2))
		}
	}
	r.LoadAverage[1] = loadAverage()
	r.Goals = r.goals()
	r.print(os.Stdout)
	r.save(t)
	checkGrowth(t, r)
}

// save writes the report so far to BENCH_JSON, when set.
func (r *report) save(t *testing.T) {
	t.Helper()
	if path := os.Getenv("BENCH_JSON"); path != "" {
		if err := r.writeJSON(path); err != nil {
			t.Fatal(err)
		}
	}
}

// checkGrowth asserts what holds at any size: a copy adds every document
// once more, and chunks with them.
func checkGrowth(t *testing.T, r *report) {
	t.Helper()
	var one *row
	for i := range r.Rows {
		if r.Rows[i].Multiple == 1 {
			one = &r.Rows[i]
		}
	}
	if one == nil {
		return
	}
	for _, row := range r.Rows {
		if row.Multiple > 1 && (row.Files != row.Multiple*one.Files || row.Chunks < row.Multiple*one.Chunks*9/10) {
			t.Errorf("%s: %d files, %d chunks; want %d× 1×'s %d files and about as many times its %d chunks",
				row.Corpus, row.Files, row.Chunks, row.Multiple, one.Files, one.Chunks)
		}
	}
}

// realEmbedding is the real embedder the flags name, if any.
func realEmbedding() (podconfig.Embedding, bool) {
	return podconfig.Embedding{BaseURL: *realURL, Model: *realModel, Dimensions: dim, MaxInputTokens: int32(*realMaxTokens)}, *realURL != ""
}

func parseMultiples(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-scalecorpus.multiples: %q is not a positive whole number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// measure is one size on its own Milvus Lite: ingestion, searches, the
// route.
func measure(ctx context.Context, t *testing.T, bin string, c corpus, hash podconfig.Embedding, questions []string) row {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "corpus")
	files, err := c.write(dir)
	if err != nil {
		t.Fatal(err)
	}
	milvus, err := testenv.StartMilvusLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer milvus.Stop()
	out := row{Corpus: c.Name, Multiple: c.Multiple, Files: files, Search: map[string]searchFigures{}}
	var chunks int
	out.Ingest, chunks = ingestRun(ctx, t, bin, milvus, dir, collection, hash, v1alpha1.DefaultEmbedConcurrency)
	out.Chunks = chunks
	if c.Multiple == 1 {
		// The other concurrency, into a collection of its own.
		if *concurrency1 {
			more, _ := ingestRun(ctx, t, bin, milvus, dir, "scale_hash_c1", hash, 1)
			out.Ingests = append(out.Ingests, more)
		}
		out.EmbedderAlone = embedderAlone(ctx, t, dir, hash)
	}
	client, err := knowledge.Connect(ctx, knowledge.Connection{URI: milvus.URI})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close(context.Background()) }()
	store := knowledge.NewStore(client, collection, dim)
	for _, kind := range searchKinds {
		out.Search[kind] = searchRun(ctx, t, store, milvus.Pid(), kind, questions)
	}
	out.Route = routeRun(ctx, t, bin, milvus.URI, hash, questions)
	out.MilvusRSSMiB, _ = testenv.Memory(milvus.Pid())
	return out
}

// measureReal ingests a part of the Argo CD corpus through the real
// embedder (served by processes processes) at concurrency 1 and 2, each
// into a collection of its own, and measures the embedder alone on the
// same chunks.
func measureReal(ctx context.Context, t *testing.T, bin string, e podconfig.Embedding, processes int) realFigures {
	t.Helper()
	c := corpus{Name: fmt.Sprintf("argocd, every %d. document", *realEvery), Parts: []part{{Name: "argocd", Dir: argocdCorpus, Copies: 1, Every: *realEvery}}}
	dir := filepath.Join(t.TempDir(), "corpus")
	files, err := c.write(dir)
	if err != nil {
		t.Fatal(err)
	}
	milvus, err := testenv.StartMilvusLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer milvus.Stop()
	out := realFigures{Corpus: c.Name, Files: files, Processes: processes}
	for _, concurrency := range []int{1, 2} {
		in, chunks := ingestRun(ctx, t, bin, milvus, dir, fmt.Sprintf("scale_real_c%d", concurrency), e, concurrency)
		out.Ingests, out.Chunks = append(out.Ingests, in), chunks
	}
	out.Alone = embedderAlone(ctx, t, dir, e)
	t.Logf("real embedder, %d processes: %+v", processes, out)
	return out
}

// ingested reads `ragroute ingest`'s summary line.
var ingested = regexp.MustCompile(`(\d+) files, (\d+) chunks`)

// ingestRun runs `ragroute ingest` over the corpus' two sources into
// coll and returns its figures and the chunks it wrote.
func ingestRun(ctx context.Context, t *testing.T, bin string, milvus *testenv.MilvusLite, dir, coll string, e podconfig.Embedding, concurrency int) (ingestFigures, int) {
	t.Helper()
	// The keyword analyzer is the route's store's (routeRun): a route
	// refuses an index another analyzer built.
	route, err := routemanifest.Load(routeManifests)
	if err != nil {
		t.Fatal(err)
	}
	cfg := podconfig.IngestConfig{
		Version: podconfig.IngestVersion, Store: storeName,
		Milvus:    podconfig.Milvus{URI: milvus.URI, Database: v1alpha1.DefaultMilvusDatabase, Collection: coll},
		Embedding: e,
		Chunking: podconfig.Chunking{MaxTokens: v1alpha1.DefaultChunkMaxTokens, OverlapTokens: v1alpha1.DefaultChunkOverlapTokens,
			MergeBelowTokens: v1alpha1.DefaultChunkMergeBelowTokens, FrontMatterKey: v1alpha1.DefaultFrontMatterKey},
		Sources: []podconfig.Source{
			{Name: publicSource, Path: filepath.Join(dir, publicSource), Principals: []string{"public"}},
			{Name: opsSource, Path: filepath.Join(dir, opsSource), Principals: []string{"group:ops"}},
		},
		BatchSize: v1alpha1.DefaultEmbedBatchSize, Concurrency: concurrency,
		Lexical: route.Store.Search.Lexical,
	}
	path := filepath.Join(t.TempDir(), "ingest.json")
	writeJSON(t, path, cfg)
	var output bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "ingest", "-config", path)
	cmd.Stdout, cmd.Stderr = &output, &output
	milvusBefore := testenv.TreeCPU(milvus.Pid())
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("ragroute ingest %s: %v\n%s", coll, err, output.String())
	}
	m := ingested.FindStringSubmatch(output.String())
	if m == nil {
		t.Fatalf("ragroute ingest printed no summary:\n%s", output.String())
	}
	chunks, _ := strconv.Atoi(m[2])
	usage := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ingestFigures{
		Embedder: e.Model, Concurrency: concurrency, Seconds: elapsed.Seconds(),
		ChunksPerSecond:  float64(chunks) / elapsed.Seconds(),
		PeakRSSMiB:       float64(usage.Maxrss) / 1024, // KiB on Linux
		CPUSeconds:       (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(),
		MilvusCPUSeconds: (testenv.TreeCPU(milvus.Pid()) - milvusBefore).Seconds(),
	}, chunks
}

// searchRun times one kind of search over the questions, one at a time,
// after one untimed search (which loads the ACL table), with the CPU
// Milvus spent on them. The ACL-filtered kind must find public chunks
// only.
func searchRun(ctx context.Context, t *testing.T, store *knowledge.Store, milvusPID int, kind string, questions []string) searchFigures {
	t.Helper()
	req := knowledge.SearchRequest{Principals: everyone, Candidates: candidates, RRFK: rrfK}
	switch kind {
	case "dense":
		req.Primitives = []knowledge.Primitive{knowledge.TextDense}
	case "bm25":
		req.Primitives = []knowledge.Primitive{knowledge.TextSparse}
	case "hybrid":
		req.Primitives = knowledge.AllPrimitives
	case "hybrid-acl":
		req.Primitives, req.Principals = knowledge.AllPrimitives, staff
	}
	embedder := &testenv.HashEmbedder{Dim: dim}
	search := func(q string) []knowledge.Hit {
		vectors, _ := embedder.Embed(ctx, []string{q})
		req.Query, req.Vector = q, vectors[0]
		hits, err := store.HybridSearch(ctx, req)
		if err != nil {
			t.Fatalf("%s search: %v", kind, err)
		}
		return hits
	}
	search(questions[0])
	var samples []time.Duration
	hits := 0
	cpuBefore := testenv.TreeCPU(milvusPID)
	for i := range *queries {
		start := time.Now()
		found := search(questions[i%len(questions)])
		samples = append(samples, time.Since(start))
		hits += len(found)
		for _, h := range found {
			if kind == "hybrid-acl" && !strings.HasPrefix(h.Source, publicSource+"/") {
				t.Fatalf("a search as %v found %s, of the ops source", staff, h.Source)
			}
		}
	}
	cpu := testenv.TreeCPU(milvusPID) - cpuBefore
	if hits == 0 {
		t.Fatalf("%s: %d searches found nothing", kind, len(samples))
	}
	slices.Sort(samples)
	return searchFigures{
		P50ms: ms(samples[len(samples)/2]), P95ms: ms(samples[min(len(samples)-1, len(samples)*95/100)]),
		MilvusCPUms: ms(cpu) / float64(len(samples)), Hits: float64(hits) / float64(len(samples)),
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// routeRun starts `ragroute serve` on the collection (hack/perf's route,
// exact cache off so every call searches), asks /v1/search the
// questions in turn and reads its RSS.
func routeRun(ctx context.Context, t *testing.T, bin, milvusURI string, e podconfig.Embedding, questions []string) routeFigures {
	t.Helper()
	cfg, err := routemanifest.Load(routeManifests)
	if err != nil {
		t.Fatal(err)
	}
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server = podconfig.Server{Port: int32(port)}
	cfg.Store.Milvus.URI, cfg.Store.Milvus.Collection = milvusURI, collection
	cfg.Store.Embedding = e
	cfg.Model.BaseURL = e.BaseURL // searches never reach the model
	cfg.Cache.MaxEntries = 0
	// One user asks every search: the per-user limits are not measured.
	cfg.Limits = podconfig.Limits{ConcurrentTurnsPerUser: 1024, TurnsPerMinutePerUser: 1 << 20, MaxInFlightTurns: 1024}
	dir := t.TempDir()
	path := filepath.Join(dir, "route.json")
	writeJSON(t, path, cfg)
	p, err := testenv.StartProcess(testenv.ProcessSpec{Command: bin, LogPath: filepath.Join(dir, "serve.log"),
		Args: []string{"serve", "-config", path, "-listen", fmt.Sprintf("127.0.0.1:%d", port), "-log-level", "warn"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitReady(ctx, base+"/readyz", p); err != nil {
		log, _ := os.ReadFile(p.LogPath)
		t.Fatalf("ragroute serve: %v\n%s", err, log)
	}
	client := &http.Client{Timeout: time.Minute}
	for i := range *routeSearches {
		body, _ := json.Marshal(map[string]string{"query": questions[i%len(questions)]})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/search", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(v1alpha1.DefaultProxyUserHeader, "scale")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("route search: %v", err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("route search: %s", resp.Status)
		}
	}
	rss, peak := testenv.Memory(p.Pid())
	return routeFigures{RSSMiB: rss, PeakRSSMiB: peak}
}

func waitReady(ctx context.Context, url string, p *testenv.Process) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p.Exited() {
			return errors.New("exited before it was ready")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// embedderAlone is what the embedder serves with nothing else running:
// the 1× corpus' chunks (text and title path, as ingestion embeds them),
// in batches of the ingestion's size, one and two batches in flight,
// through the same client ingestion uses. Inputs are not cut to the
// embedder's limit here (ingestion cuts the few that exceed it).
func embedderAlone(ctx context.Context, t *testing.T, dir string, e podconfig.Embedding) []embedderRate {
	t.Helper()
	var texts []string
	for _, source := range []string{publicSource, opsSource} {
		docs, err := eval.ReadCorpus(filepath.Join(dir, source), source)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range docs {
			chunks, err := ingest.Chunks(doc, ingest.DefaultOptions())
			if err != nil {
				continue // ingestion refuses it too
			}
			for _, ch := range chunks {
				r := ingestion.RowFromChunk(ch)
				texts = append(texts, r.EmbeddedText(), r.TitlePath())
			}
		}
	}
	embedder := assembly.DocumentEmbedder(e, os.Getenv, assembly.BatchEmbedTimeout)
	var out []embedderRate
	for _, concurrency := range []int{1, 2} {
		group, gctx := errgroup.WithContext(ctx)
		group.SetLimit(concurrency)
		start := time.Now()
		for batch := range slices.Chunk(texts, 2*v1alpha1.DefaultEmbedBatchSize) {
			group.Go(func() error {
				_, err := embedder.Embed(gctx, batch)
				return err
			})
		}
		if err := group.Wait(); err != nil {
			t.Fatalf("embedder %s alone: %v", e.Model, err)
		}
		out = append(out, embedderRate{Embedder: e.Model, Concurrency: concurrency,
			ChunksPerSecond: float64(len(texts)/2) / time.Since(start).Seconds()})
	}
	return out
}

// roundRobin serves the embedders at bases (each …/v1) in turn behind one
// loopback base URL, as a Service spreads calls over an embedder
// Deployment's pods.
func roundRobin(t *testing.T, bases ...string) string {
	t.Helper()
	targets := make([]*url.URL, len(bases))
	for i, base := range bases {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("embedder base URL %q: %v", base, err)
		}
		targets[i] = u
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(targets[(next.Add(1)-1)%uint64(len(targets))])
	}}
	server := httptest.NewServer(proxy)
	t.Cleanup(server.Close)
	return server.URL
}

// ragrouteBinary is RAGROUTE_BIN, or ragroute built now.
func ragrouteBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("RAGROUTE_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "ragroute")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ragroute")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ragroute: %v\n%s", err, out)
	}
	return bin
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
