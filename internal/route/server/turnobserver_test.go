package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/ragroute/ragroute/internal/route/routetest"
)

// syncBuffer is a log sink the server's goroutines may share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Each finished turn writes one log line under its turn id, naming the
// user only by a hash, and shows in the metrics.
func TestFinishedTurnIsLoggedOnceAndMeasured(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	var logs syncBuffer
	srv := serveWith(t, w, func(o *Options) { o.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })

	resp, _ := completion(t, srv.URL, `{"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`)
	turnID := resp.Header.Get("X-Request-Id")
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) == nil && entry["msg"] == "turn finished" {
			lines = append(lines, entry)
			if strings.Contains(line, `"ann"`) {
				t.Errorf("the log names the user: %s", line)
			}
		}
	}
	if len(lines) != 1 {
		t.Fatalf("turn log lines %v", lines)
	}
	entry := lines[0]
	if entry["turn"] != turnID || entry["result"] != "answered" || entry["endpoint"] != "completions" || len(entry["user_hash"].(string)) != 16 {
		t.Errorf("log line %v, turn %s", entry, turnID)
	}
	if timings, ok := entry["timings_ms"].(map[string]any); !ok || timings["model_answer"] == nil || timings["grounding"] == nil {
		t.Errorf("log line without the stage timings (the model's answer, the grounding check's wait): %v", entry)
	}

	_, metrics := get(t, srv.URL+"/metrics")
	for _, want := range []string{"ragroute_time_to_first_token_seconds_count 1", `ragroute_http_requests_total{code="200",handler="/v1/chat/completions"`,
		"ragroute_http_requests_in_flight", "go_goroutines", "process_resident_memory_bytes",
		"\nragroute_cache_entries 1\n", "\nragroute_turn_log_turns 0\n", `ragroute_stage_duration_seconds_count{stage="grounding"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
