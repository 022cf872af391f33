package main

import (
	"context"
	"net/http"
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

	req, _ := http.NewRequest("POST", base+"/v1/turns", strings.NewReader(`{"messages":[{"role":"user","content":"What does prune last do?"}]}`))
	req.Header.Set("X-User", "ann")
	req.Header.Set("X-Groups", "staff")
	req.Header.Set("X-Proxy-Secret", "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %v %v", resp, err)
	}
	var submitted struct {
		StreamURL string `json:"stream_url"`
	}
	decodeJSON(t, resp.Body, &submitted)
	req, _ = http.NewRequest("GET", base+submitted.StreamURL, nil)
	req.Header.Set("X-User", "ann")
	req.Header.Set("X-Proxy-Secret", "s3cret")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, stream.Body)
	if !strings.Contains(body, `"text":"\u003e `) && !strings.Contains(body, `"text":"> `) || !strings.Contains(body, "event: citation") ||
		!strings.Contains(body, "event: turn.completed") {
		t.Fatalf("stream:\n%s", body)
	}

	cfg.Answer.Mode = "generative"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "model.baseURL and model.name are required unless answer.mode is extractive") {
		t.Errorf("a generative route without a model: %v", err)
	}
}
