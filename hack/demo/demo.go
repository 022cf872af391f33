package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ragroute/ragroute/hack/demo/localrun"
	"github.com/ragroute/ragroute/internal/testenv"
)

// namespace is where the samples are applied.
const namespace = "ragroute-demo"

// demo is one run: what it started, to stop it again.
type demo struct {
	cfg       config
	start     time.Time
	processes []*testenv.Process
	// scripted is the in-process model server of DEMO_MODELS=scripted.
	scripted *testenv.ModelServer
	env      *envtest.Environment
	admin    client.Client

	chatURL, embedURL, rerankURL, milvusURI, routeURL, redisAddr string
	// e5URL is the Russian samples' multilingual embedder.
	e5URL   string
	applied samples
	// routeCmd is the route's container as run here (its config, its
	// environment), for the feedback export.
	routeCmd localrun.Command
	// rated is the answered turn alice rates (feedback.go).
	rated struct {
		q    question
		turn string
	}
	// pageURL is the route's page behind the demo's sign-in proxy (page.go).
	pageURL string
}

func newDemo(cfg config) *demo { return &demo{cfg: cfg, start: time.Now()} }

type step struct {
	title string
	run   func(context.Context) error
}

func (d *demo) run(ctx context.Context) error {
	if err := os.RemoveAll(d.cfg.work); err != nil {
		return fmt.Errorf("clean %s: %w", d.cfg.work, err)
	}
	if err := os.MkdirAll(filepath.Join(d.cfg.work, "logs"), 0o700); err != nil {
		return err
	}
	steps := []step{
		d.modelsStep(),
		{"Milvus Lite", d.startMilvus},
		{"Redis, the route's turn log and its users' verdicts", d.startRedis},
		{"local control plane: etcd + kube-apiserver (no nodes), ragroute's CRDs", d.startControlPlane},
		{"the operator (ragroute manager), with the ClusterRole of config/rbac", d.startOperator},
		{"kubectl apply -k config/samples, endpoints pointed at this machine", d.applySamples},
		{"the ingestion Job the operator created, run here as a process", d.runIngestion},
		{"the route Deployment the operator rendered, run here as a process", d.runRoute},
		{"questions, asked as two users", d.askQuestions},
		{"a user's verdict: alice rates an answer down; `ragroute feedback export` turns it into an evaluation question", d.rateAndExport},
		{"the route's MCP tools, listed, and search_knowledge as the same two users", d.mcpTools},
		{"the sample RouteEvaluation's first run: the Job the operator started, run here as a process", d.runEvaluation},
		{"kubectl apply -k config/samples/ru: a Russian store (multilingual-e5-small), its route and prompt; a Russian question, and one no page answers", d.russianSamples},
		{"the other samples (config/samples/*.yaml beside the kustomization): created, their route Deployments run here, Ready", d.runOtherSamples},
		{"the route's page, behind a loopback proxy that plays the sign-in proxy", d.startPage},
	}
	for i, s := range steps {
		fmt.Printf("\n==> [%5.1fs] %d/%d %s\n", time.Since(d.start).Seconds(), i+1, len(steps), s.title)
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.title, err)
		}
	}
	fmt.Printf("\n==> [%5.1fs] done\n", time.Since(d.start).Seconds())
	if !d.cfg.stay {
		return nil
	}
	proxyHeader := ""
	if p := d.applied.proxy; p.value != "" {
		proxyHeader = fmt.Sprintf("-H '%s: %s' ", p.header, p.value)
	}
	fmt.Printf("\nEverything keeps running until Ctrl-C:\n"+
		"  export KUBECONFIG=%s; kubectl -n %s get knowledgestores,queryroutes,platformprompts,routeevaluations,jobs,deployments\n"+
		"  curl -N %s-H 'X-Forwarded-User: alice' -H 'X-Forwarded-Groups: staff' %s/v1/chat/completions \\\n"+
		"    -d '{\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"How are claims under 50 EUR approved?\"}]}'\n",
		filepath.Join(d.cfg.work, "kubeconfig"), namespace, proxyHeader, d.routeURL)
	fmt.Printf("  open %s in a browser: the route's page, as alice or bob (demo identities)\n", d.pageURL)
	<-ctx.Done()
	return nil
}

// shutdown stops what run started, newest first, the control plane last
// so the operator never outlives its API server.
func (d *demo) shutdown() {
	for i := len(d.processes) - 1; i >= 0; i-- {
		d.processes[i].Stop()
	}
	if d.scripted != nil {
		d.scripted.Close()
	}
	if d.env != nil {
		if err := d.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stop the control plane:", err)
		}
	}
}

// startProcess runs a server in the background, logging to the work folder.
func (d *demo) startProcess(name, command string, args, env []string) (*testenv.Process, error) {
	p, err := testenv.StartProcess(testenv.ProcessSpec{Command: command, Args: args, Env: env,
		LogPath: filepath.Join(d.cfg.work, "logs", name+".log")})
	if err != nil {
		return nil, err
	}
	d.processes = append(d.processes, p)
	return p, nil
}

// waitHTTP waits until url answers 200, the process exits, or limit passes.
func waitHTTP(ctx context.Context, p *testenv.Process, url string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p.Exited() {
			return fmt.Errorf("it exited before %s answered; see %s", url, p.LogPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer 200 within %s; see %s", url, limit, p.LogPath)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitFor polls check until it reports done, or limit passes.
func waitFor(ctx context.Context, limit time.Duration, what string, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		done, err := check(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not within %s", what, limit)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
