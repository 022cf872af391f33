package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// TestOpenAIPythonSDK runs the official OpenAI Python SDK (pinned, in the
// virtualenv make test installs: RAGROUTE_OPENAI_PYTHON) against `ragroute
// serve` on loopback: hack/openai-sdk/client.py lists the models, chats
// with content parts streamed and not, reads usage and raw headers, and
// checks the SDK's error classes for 400, 401 and 429.
func TestOpenAIPythonSDK(t *testing.T) {
	python := os.Getenv("RAGROUTE_OPENAI_PYTHON")
	if python == "" {
		t.Skip("RAGROUTE_OPENAI_PYTHON is unset: make test installs the OpenAI SDK (hack/openai-sdk.sh)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, _ := pruneRoute(ctx, t)
	// Four turns at once per user, then one every 12 s: the script's
	// burst of ten meets 429.
	cfg.Limits = podconfig.Limits{ConcurrentTurnsPerUser: 4, TurnsPerMinutePerUser: 5, MaxInFlightTurns: 64}
	base, _, _ := serveOnLoopback(ctx, t, cfg)
	waitOK(t, base+"/readyz")

	cmd := exec.CommandContext(ctx, python, "../../hack/openai-sdk/client.py", base+"/v1", "support")
	cmd.Env = append(os.Environ(), "PROXY_SECRET=s3cret")
	out, err := cmd.CombinedOutput()
	t.Logf("OpenAI SDK:\n%s", out)
	if err != nil || !strings.Contains(string(out), "ok: 429 RateLimitError") {
		t.Fatalf("the OpenAI SDK's checks failed: %v", err)
	}
}
