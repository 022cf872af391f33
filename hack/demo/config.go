package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// config is what hack/demo.sh installed and where the demo keeps its files.
type config struct {
	root     string // the repository
	work     string // logs, kubeconfigs, materialised volumes
	assets   string // etcd, kube-apiserver, kubectl (hack/testbed.sh)
	ragroute string // the ragroute binary
	models   string // hack/models.sh
	// stay keeps everything running after the questions, until Ctrl-C.
	stay bool
	// chatURL and chatModel name another OpenAI-compatible chat model to
	// use instead of the local SmolLM2 (an Ollama or vLLM you run).
	chatURL, chatModel string
	// mode is the sample route's mode (DEMO_MODE): singleRound as the
	// sample says, or agentic.
	mode string
	// answerMode (DEMO_ANSWER: generative or extractive) and grounding
	// (DEMO_GROUNDING: annotate, strip or fallback) override the sample
	// route's spec.answer.
	answerMode, grounding string
}

func configFromEnv() (config, error) {
	root, err := os.Getwd()
	if err != nil {
		return config{}, err
	}
	cfg := config{
		root:       root,
		work:       filepath.Join(root, "bin", "demo"),
		assets:     os.Getenv("KUBEBUILDER_ASSETS"),
		ragroute:   filepath.Join(root, "bin", "ragroute"),
		models:     filepath.Join(root, "hack", "models.sh"),
		stay:       os.Getenv("DEMO_STAY") != "",
		chatURL:    os.Getenv("DEMO_CHAT_URL"),
		chatModel:  os.Getenv("DEMO_CHAT_MODEL"),
		mode:       os.Getenv("DEMO_MODE"),
		answerMode: os.Getenv("DEMO_ANSWER"),
		grounding:  os.Getenv("DEMO_GROUNDING"),
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
		return config{}, errors.New("bin/ragroute is missing: run me with `make demo`, which builds it")
	}
	return cfg, nil
}
