package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

// TestServeWithoutAModelQuotesTheFragments: a route with no chat model
// (extractive answers, as the operator renders a QueryRoute without
// spec.model) starts, and answers from the fragments with no model call.
func TestServeWithoutAModelQuotesTheFragments(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, models := pruneRoute(ctx, t)
	models.Chat = func(testenv.ChatRequest) testenv.ChatReply {
		t.Error("a route without a model called a chat model")
		return testenv.ChatReply{Content: "invented"}
	}
	cfg.Model = podconfig.ChatModel{SearchPolicy: podconfig.SearchAlways}
	cfg.Answer.Mode = "extractive"
	base, _, stop := serveOnLoopback(ctx, t, cfg)
	defer stop()
	waitOK(t, base+"/readyz")

	body := askPruneLast(t, base, nil)
	if !strings.Contains(body, `"text":"\u003e `) && !strings.Contains(body, `"text":"> `) || !strings.Contains(body, "event: citation") ||
		!strings.Contains(body, "event: turn.completed") {
		t.Fatalf("stream:\n%s", body)
	}

	cfg.Answer.Mode = "generative"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "model.baseURL and model.name are required unless answer.mode is extractive") {
		t.Errorf("a generative route without a model: %v", err)
	}
}
