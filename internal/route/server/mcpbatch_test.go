package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// mcpCall is a JSON-RPC call of tool with arguments args (JSON).
func mcpCall(id int, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + tool +
		`","arguments":` + args + `}}`
}

// batchOf is a JSON-RPC batch of n calls of tool.
func batchOf(n int, tool, args string) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = mcpCall(i+1, tool, args)
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// resultsIn counts the results in an SSE body and the distinct turn ids
// they name.
func resultsIn(body string) (results, turns int) {
	seen := map[string]bool{}
	for line := range strings.Lines(body) {
		var msg struct {
			Result *struct {
				StructuredContent struct {
					TurnID string `json:"turn_id"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &msg) != nil || msg.Result == nil {
			continue
		}
		results++
		if id := msg.Result.StructuredContent.TurnID; id != "" {
			seen[id] = true
		}
	}
	return results, len(seen)
}

// A JSON-RPC batch is refused whole, before any of its calls runs,
// whatever protocol version the request names or leaves out (the oldest,
// which allowed batches): its asks would share the request's id as their
// turn id, and one request could start any number of calls. One call per
// request keeps each turn id its own.
func TestMCPRefusesJSONRPCBatches(t *testing.T) {
	srv, _, letGo := serveHeld(t, func(o *Options) { o.Limits.ConcurrentTurnsPerUser, o.Limits.TurnsPerMinutePerUser = 300, 60000 })
	letGo() // a call that runs answers at once
	ask, search := `{"question":"How are sync waves ordered?"}`, `{"query":"sync waves"}`
	for _, tc := range []struct {
		name, body string
		header     []string
	}{
		{"one ask", batchOf(1, "ask", ask), nil},
		{"three asks", batchOf(3, "ask", ask), nil},
		{"three asks, protocol 2025-03-26", batchOf(3, "ask", ask), []string{"MCP-Protocol-Version", "2025-03-26"}},
		{"200 searches", batchOf(200, "search_knowledge", search), nil},
		{"three asks after white space", " \r\n\t" + batchOf(3, "ask", ask), nil},
	} {
		resp := do(t, "POST", srv.URL+"/mcp", "ann", tc.body, append(mcpHeaders, tc.header...)...)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var refused openAIError
		_ = json.Unmarshal(body, &refused)
		if resp.StatusCode != http.StatusBadRequest || refused.Error.Code != "mcp_batch_refused" {
			results, turns := resultsIn(string(body))
			t.Errorf("%s: %d %+v (%d results, %d distinct turn ids), want 400 mcp_batch_refused", tc.name, resp.StatusCode, refused.Error,
				results, turns)
		}
	}
	if _, metrics := get(t, srv.URL+"/metrics"); strings.Contains(metrics, "ragroute_turns_total{") {
		t.Error("a refused batch started turns")
	}

	// One call per request: each ask's turn is the request's, its own.
	turns := map[string]bool{}
	for range 3 {
		resp := do(t, "POST", srv.URL+"/mcp", "ann", mcpCall(1, "ask", ask), mcpHeaders...)
		last, err := lastData(resp.Body)
		resp.Body.Close()
		var answered struct {
			Result struct {
				StructuredContent askAnswer `json:"structuredContent"`
			} `json:"result"`
		}
		_ = json.Unmarshal([]byte(strings.TrimPrefix(last, "data: ")), &answered)
		if turn := answered.Result.StructuredContent.TurnID; err != nil || turn != resp.Header.Get(requestIDHeader) || turns[turn] {
			t.Errorf("an ask's turn %q (%v), request %q, turns before %v", turn, err, resp.Header.Get(requestIDHeader), turns)
		}
		turns[answered.Result.StructuredContent.TurnID] = true
	}
}
