package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// system is one server under load.
type system struct {
	name   string
	pid    int
	client client
	proxy  *countingProxy
}

// processes are the children this program started, stopped by PID.
type processes struct {
	mu       sync.Mutex
	children map[int]*child
}

// child is a started process; exited closes once it has been reaped.
type child struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// start runs a child with its output in logPath.
func (p *processes) start(logPath string, name string, args ...string) (*child, error) {
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "GRPC_VERBOSITY=NONE")
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{cmd: cmd, exited: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		out.Close()
		close(c.exited)
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.children == nil {
		p.children = map[int]*child{}
	}
	p.children[cmd.Process.Pid] = c
	return c, nil
}

// stop ends one child: SIGTERM, then SIGKILL after 10 s.
func (p *processes) stop(pid int) {
	p.mu.Lock()
	c := p.children[pid]
	delete(p.children, pid)
	p.mu.Unlock()
	if c == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

func (p *processes) stopAll() {
	p.mu.Lock()
	var pids []int
	for pid := range p.children {
		pids = append(pids, pid)
	}
	p.mu.Unlock()
	for _, pid := range pids {
		p.stop(pid)
	}
}

// collection is the Milvus collection alias the ragroute systems serve.
const collection = "perf_docs"

// startSystem starts one system and waits until it answers.
func startSystem(ctx context.Context, o options, procs *processes, name, modelURL, embedderURL string) (*system, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	logPath := filepath.Join(o.dataDir, name+".log")
	var c *child
	sys := &system{name: name, client: client{http: &http.Client{}, url: base + "/v1/chat/completions"}}
	switch name {
	case "ragroute", "ragroute-cached":
		cfg := routeConfig(o, port, modelURL, embedderURL, name == "ragroute-cached")
		path := filepath.Join(o.dataDir, name+".json")
		if err := writeJSON(path, cfg); err != nil {
			return nil, err
		}
		if c, err = procs.start(logPath, o.ragroute, "serve", "-config", path, "-listen", fmt.Sprintf("127.0.0.1:%d", port), "-log-level", "warn"); err != nil {
			return nil, err
		}
		sys.client.headers = map[string]string{v1alpha1.DefaultProxyUserHeader: "perf"}
		err = waitReady(ctx, base+"/readyz", c, logPath, time.Minute)
	case "llamaindex-dense", "llamaindex-hybrid":
		config := map[string]string{"llamaindex-dense": "llamaindex-sentence-dense", "llamaindex-hybrid": "llamaindex-sentence-hybrid"}[name]
		if c, err = procs.start(logPath, o.python, o.llamaScript, "--config", config, "--port", strconv.Itoa(port),
			"--corpus", o.corpus, "--milvus-uri", o.milvusURI, "--embedding-base-url", embedderURL, "--embedding-model", o.embedderModel,
			"--dimensions", strconv.Itoa(o.dims), "--max-input-tokens", strconv.Itoa(o.maxInputTokens),
			"--top-k", strconv.Itoa(o.topK), "--model-url", modelURL); err != nil {
			return nil, err
		}
		log.Printf("%s: LlamaIndex ingests the corpus (a minute or two)", name)
		err = waitReady(ctx, base+"/health", c, logPath, 15*time.Minute)
	default:
		return nil, fmt.Errorf("unknown system %q: want ragroute, ragroute-cached, llamaindex-dense or llamaindex-hybrid", name)
	}
	if err != nil {
		return nil, err
	}
	sys.pid = c.cmd.Process.Pid
	return sys, nil
}

// ingest writes the corpus into Milvus with `ragroute ingest`, straight
// to the embedder (ingestion is not what is measured).
func ingest(ctx context.Context, o options, procs *processes) error {
	cfg := podconfig.IngestConfig{
		Version: podconfig.IngestVersion, Store: "perf",
		Milvus:    podconfig.Milvus{URI: o.milvusURI, Database: v1alpha1.DefaultMilvusDatabase, Collection: collection},
		Embedding: embedding(o, o.embedderURL),
		Chunking: podconfig.Chunking{MaxTokens: v1alpha1.DefaultChunkMaxTokens, OverlapTokens: v1alpha1.DefaultChunkOverlapTokens,
			MergeBelowTokens: v1alpha1.DefaultChunkMergeBelowTokens, FrontMatterKey: v1alpha1.DefaultFrontMatterKey},
		DefaultPrincipals: []string{"public"},
		Sources:           []podconfig.Source{{Name: "corpus", Path: o.corpus}},
		BatchSize:         v1alpha1.DefaultEmbedBatchSize, Concurrency: v1alpha1.DefaultEmbedConcurrency,
	}
	path := filepath.Join(o.dataDir, "ingest.json")
	if err := writeJSON(path, cfg); err != nil {
		return err
	}
	log.Printf("ragroute: ingesting the corpus")
	logPath := filepath.Join(o.dataDir, "ingest.log")
	c, err := procs.start(logPath, o.ragroute, "ingest", "-config", path)
	if err != nil {
		return err
	}
	select {
	case <-c.exited:
	case <-ctx.Done():
		procs.stop(c.cmd.Process.Pid)
		return ctx.Err()
	}
	if c.err != nil {
		data, _ := os.ReadFile(logPath)
		return fmt.Errorf("ragroute ingest: %w\n%s", c.err, tail(data))
	}
	return nil
}

func embedding(o options, baseURL string) podconfig.Embedding {
	return podconfig.Embedding{BaseURL: baseURL, Model: o.embedderModel, Dimensions: int32(o.dims), MaxInputTokens: int32(o.maxInputTokens)}
}

// routeConfig is a route with the operator's defaults, answering anyone
// behind a trusted proxy; cached: the exact cache is on (else off, so
// every turn searches).
func routeConfig(o options, port int, modelURL, embedderURL string, cached bool) podconfig.RouteConfig {
	weights := map[string]float64{}
	var primitives []string
	for _, p := range v1alpha1.AllSearchPrimitives {
		primitives = append(primitives, string(p))
		weights[string(p)] = v1alpha1.DefaultSearchWeights[p]
	}
	entries := int32(0)
	if cached {
		entries = v1alpha1.DefaultCacheMaxEntries
	}
	return podconfig.RouteConfig{
		Version: podconfig.RouteVersion,
		Route:   podconfig.RouteRef{Name: "perf", Namespace: "perf"},
		Server:  podconfig.Server{Port: int32(port)},
		Prompt: podconfig.Prompt{Name: "perf", Platform: "You answer questions about Argo CD from its documentation.",
			NotFound: "I could not find this in the documentation.", Hash: "perf"},
		Store: podconfig.Store{Name: "perf",
			Milvus:    podconfig.Milvus{URI: o.milvusURI, Database: v1alpha1.DefaultMilvusDatabase, Collection: collection},
			Embedding: embedding(o, embedderURL),
			Search:    podconfig.Search{Primitives: primitives, Candidates: v1alpha1.DefaultCandidates, RRFK: v1alpha1.DefaultRRFK, Weights: weights}},
		Model: podconfig.ChatModel{BaseURL: modelURL, Name: "scripted", Temperature: v1alpha1.DefaultTemperature,
			SearchPolicy: podconfig.SearchModelDecides, MaxToolCallsPerRound: v1alpha1.DefaultMaxToolCalls,
			IdleTimeout: podconfig.Duration(v1alpha1.DefaultModelIdleTimeout)},
		Window: podconfig.Window{ContextTokens: 8192, AnswerReserveTokens: 1024},
		Retrieval: podconfig.Retrieval{SimilarityFloor: v1alpha1.DefaultSimilarityFloor, StrictFloor: v1alpha1.DefaultStrictFloor,
			MaxFragments: v1alpha1.DefaultMaxFragments, Research: true, FlaggedFragments: podconfig.FlaggedKeep,
			Diversity: podconfig.Diversity{MaxPerDocument: v1alpha1.DefaultMaxPerDocument, Margin: v1alpha1.DefaultDiversityMargin,
				Dominance: v1alpha1.DefaultDominance}},
		Rerank: podconfig.Rerank{Mode: podconfig.RerankRRF},
		Cache:  podconfig.Cache{Backend: podconfig.BackendMemory, TTL: podconfig.Duration(v1alpha1.DefaultCacheTTL), MaxEntries: entries},
		Turns:  podconfig.Turns{Backend: podconfig.BackendMemory, Retention: podconfig.Duration(v1alpha1.DefaultTurnRetention)},
		// One user asks on every stream: the per-user limits are the
		// load's, not the route's, to measure.
		Limits: podconfig.Limits{ConcurrentTurnsPerUser: 1024, TurnsPerMinutePerUser: 1 << 20, MaxInFlightTurns: 1024},
		Mode:   podconfig.ModeSingleRound,
		Answer: podconfig.Answer{Mode: podconfig.AnswerGenerative, Grounding: podconfig.Grounding{Policy: podconfig.GroundingAnnotate,
			SupportThreshold: v1alpha1.DefaultGroundingThreshold, FallbackBelow: v1alpha1.DefaultFallbackBelow}},
		Auth: podconfig.Auth{TrustedProxy: &podconfig.TrustedProxy{UserHeader: v1alpha1.DefaultProxyUserHeader,
			GroupsHeader: v1alpha1.DefaultProxyGroupsHeader, InsecureAllowAnyCaller: true}},
	}
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls url until it answers 200, the process exits, or within.
func waitReady(ctx context.Context, url string, c *child, logPath string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.exited:
			data, _ := os.ReadFile(logPath)
			return fmt.Errorf("exited before it was ready (%v):\n%s", c.err, tail(data))
		case <-time.After(200 * time.Millisecond):
		}
	}
	data, _ := os.ReadFile(logPath)
	return fmt.Errorf("not ready within %s:\n%s", within, tail(data))
}

func tail(data []byte) string {
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}
