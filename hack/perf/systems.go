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
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/routemanifest"
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
	case "ragroute", "ragroute-cached", "ragroute-dense":
		cfg, cfgErr := routeConfig(o, port, modelURL, embedderURL, name)
		if cfgErr != nil {
			return nil, cfgErr
		}
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
		return nil, fmt.Errorf("unknown system %q: want ragroute, ragroute-cached, ragroute-dense, llamaindex-dense or llamaindex-hybrid", name)
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
	// The keyword analyzer is the route's store's: a route refuses an
	// index another analyzer built.
	shipped, err := routemanifest.Load(o.route)
	if err != nil {
		return err
	}
	cfg := podconfig.IngestConfig{
		Version: podconfig.IngestVersion, Store: "perf",
		Milvus:    podconfig.Milvus{URI: o.milvusURI, Database: v1alpha1.DefaultMilvusDatabase, Collection: collection},
		Embedding: embedding(o, o.embedderURL),
		Chunking: podconfig.Chunking{MaxTokens: v1alpha1.DefaultChunkMaxTokens, OverlapTokens: v1alpha1.DefaultChunkOverlapTokens,
			MergeBelowTokens: v1alpha1.DefaultChunkMergeBelowTokens, FrontMatterKey: v1alpha1.DefaultFrontMatterKey},
		Lexical:           shipped.Store.Search.Lexical,
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

// routeConfig is the route of o.route (route.yaml: a QueryRoute with the
// operator's defaults) as the operator renders it, pointed at the
// harness' servers. System ragroute-cached keeps the exact cache on (the
// others turn it off, so every turn searches); ragroute-dense searches
// the text's dense vectors only (spec.search.weights: textDense alone),
// the like for like of LlamaIndex's dense pipeline. Every setting changed
// from the rendered route is printed.
func routeConfig(o options, port int, modelURL, embedderURL, system string) (podconfig.RouteConfig, error) {
	shipped, err := routemanifest.Load(o.route)
	if err != nil {
		return podconfig.RouteConfig{}, err
	}
	cfg := shipped
	cfg.Server = podconfig.Server{Port: int32(port)}
	cfg.Store.Milvus.URI = o.milvusURI
	cfg.Store.Embedding = embedding(o, embedderURL)
	cfg.Model.BaseURL = modelURL
	if system != "ragroute-cached" {
		cfg.Cache.MaxEntries = 0
	}
	if system == "ragroute-dense" {
		cfg.Store.Search.Weights = map[string]float64{
			string(knowledge.TextDense): 1, string(knowledge.TextSparse): 0, string(knowledge.TitleDense): 0, string(knowledge.TitleSparse): 0,
		}
	}
	// One user asks on every stream: the per-user limits are the load's,
	// not the route's, to measure. The store slots stay the route's.
	cfg.Limits.ConcurrentTurnsPerUser, cfg.Limits.TurnsPerMinutePerUser, cfg.Limits.MaxInFlightTurns = 1024, 1<<20, 1024
	for _, d := range routemanifest.Deviations(shipped, cfg) {
		log.Printf("route %s: %s", o.route, d)
	}
	return cfg, nil
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
