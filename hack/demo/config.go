package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// config is what hack/demo.sh installed and where the demo keeps its files.
type config struct {
	root     string // the repository
	work     string // logs, kubeconfigs, materialised volumes
	assets   string // etcd, kube-apiserver, kubectl (hack/testbed.sh)
	ragroute string // the ragroute binary
	models   string // hack/models.sh
	e5       string // hack/e5.sh, the Russian samples' embedder
	// scripted (DEMO_MODELS=scripted) runs the tests' scripted model
	// server instead of the local models: the demo's path in make test.
	scripted bool
	// stay keeps everything running after the questions, until Ctrl-C.
	stay bool
	// chat is the local chat model (DEMO_CHAT): qwen (the default), qwen-0.5b
	// or smollm2, a hack/models.sh server.
	chat localChat
	// chatURL and chatModel name another OpenAI-compatible chat model to
	// use instead (an Ollama or vLLM you run).
	chatURL, chatModel string
	// mode is the sample route's mode (DEMO_MODE): singleRound as the
	// sample says, or agentic.
	mode string
	// answerMode (DEMO_ANSWER: generative or extractive) and grounding
	// (DEMO_GROUNDING: annotate, strip or fallback) override the sample
	// route's spec.answer.
	answerMode, grounding string
}

// localChat is one of hack/models.sh's chat models.
type localChat struct {
	name   string // DEMO_CHAT
	server string // hack/models.sh run SERVER
	model  string // the name it serves, the route's spec.model.name
	title  string
}

// localChats are the demo's chat models, the default first: Qwen2.5-Coder
// 1.5B writes grounded answers (docs/eval.md); SmolLM2 is the fastest run.
var localChats = []localChat{
	{"qwen", "qwen", "qwen2.5-coder-1.5b-instruct", "Qwen2.5-Coder-1.5B-Instruct Q4_K_M"},
	{"qwen-0.5b", "qwen-0.5b", "qwen2.5-coder-0.5b-instruct", "Qwen2.5-Coder-0.5B-Instruct Q4_K_M"},
	{"smollm2", "chat", "smollm2-135m-instruct", "SmolLM2-135M-Instruct Q4_1"},
}

func configFromEnv() (config, error) {
	root, err := os.Getwd()
	if err != nil {
		return config{}, err
	}
	cfg := config{
		root:       root,
		work:       cmp.Or(os.Getenv("DEMO_WORK"), filepath.Join(root, "bin", "demo")),
		assets:     os.Getenv("KUBEBUILDER_ASSETS"),
		ragroute:   cmp.Or(os.Getenv("DEMO_RAGROUTE"), filepath.Join(root, "bin", "ragroute")),
		models:     filepath.Join(root, "hack", "models.sh"),
		e5:         filepath.Join(root, "hack", "e5.sh"),
		stay:       os.Getenv("DEMO_STAY") != "",
		chat:       localChats[0],
		chatURL:    os.Getenv("DEMO_CHAT_URL"),
		chatModel:  os.Getenv("DEMO_CHAT_MODEL"),
		mode:       os.Getenv("DEMO_MODE"),
		answerMode: os.Getenv("DEMO_ANSWER"),
		grounding:  os.Getenv("DEMO_GROUNDING"),
	}
	switch models := os.Getenv("DEMO_MODELS"); models {
	case "", "local":
	case "scripted":
		cfg.scripted = true
	default:
		return config{}, fmt.Errorf("DEMO_MODELS=%q: want local (the default) or scripted", models)
	}
	if name := os.Getenv("DEMO_CHAT"); name != "" {
		i := slices.IndexFunc(localChats, func(c localChat) bool { return c.name == name })
		if i < 0 {
			return config{}, fmt.Errorf("DEMO_CHAT=%q: want qwen (the default), qwen-0.5b or smollm2", name)
		}
		cfg.chat = localChats[i]
	}
	if cfg.answerMode != "" && cfg.answerMode != "generative" && cfg.answerMode != "extractive" {
		return config{}, fmt.Errorf("DEMO_ANSWER=%q: want generative or extractive", cfg.answerMode)
	}
	if cfg.grounding != "" && cfg.grounding != "annotate" && cfg.grounding != "strip" && cfg.grounding != "fallback" {
		return config{}, fmt.Errorf("DEMO_GROUNDING=%q: want annotate, strip or fallback", cfg.grounding)
	}
	if cfg.mode != "" && cfg.mode != "singleRound" && cfg.mode != "agentic" {
		return config{}, fmt.Errorf("DEMO_MODE=%q: want singleRound or agentic", cfg.mode)
	}
	if (cfg.chatURL == "") != (cfg.chatModel == "") {
		return config{}, errors.New("set DEMO_CHAT_URL and DEMO_CHAT_MODEL together (an OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1, and its model name)")
	}
	if cfg.assets == "" || os.Getenv("RAGROUTE_MILVUS_LITE") == "" {
		return config{}, errors.New("run me with `make demo`: it installs the test bed and sets KUBEBUILDER_ASSETS and RAGROUTE_MILVUS_LITE")
	}
	if _, err := os.Stat(cfg.ragroute); err != nil {
		return config{}, fmt.Errorf("%s is missing: run me with `make demo`, which builds it", cfg.ragroute)
	}
	return cfg, nil
}
