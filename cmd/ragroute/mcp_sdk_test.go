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

// TestMCPPythonSDK runs the official MCP Python SDK (pinned, in the
// virtualenv make test installs: RAGROUTE_MCP_PYTHON) against `ragroute
// serve` on loopback: hack/mcp-sdk/client.py lists the tools, calls
// search_knowledge and ask as two identities with progress, and checks
// the tool errors, the turn limits and 401 without an identity.
func TestMCPPythonSDK(t *testing.T) {
	python := os.Getenv("RAGROUTE_MCP_PYTHON")
	if python == "" {
		t.Skip("RAGROUTE_MCP_PYTHON is unset: make test installs the MCP SDK (hack/mcp-sdk.sh)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, _ := pruneRoute(ctx, t)
	cfg.MCP.Enabled = true
	// Four turns at once per user, then one every 12 s: the script's
	// six searches in a row meet the rate limit.
	cfg.Limits = podconfig.Limits{ConcurrentTurnsPerUser: 4, TurnsPerMinutePerUser: 5, MaxInFlightTurns: 64}
	base, _, _ := serveOnLoopback(ctx, t, cfg)
	waitOK(t, base+"/readyz")

	cmd := exec.CommandContext(ctx, python, "../../hack/mcp-sdk/client.py", base+"/mcp")
	cmd.Env = append(os.Environ(), "PROXY_SECRET=s3cret")
	out, err := cmd.CombinedOutput()
	t.Logf("MCP SDK:\n%s", out)
	if err != nil || !strings.Contains(string(out), "ok: no identity") {
		t.Fatalf("the MCP SDK's checks failed: %v", err)
	}
}
