package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
)

// An agentic turn through the OpenAI facade, on Milvus Lite with the
// scripted model server: the answer comes back as usual, the research in
// the extension; the second round's request holds only the question and
// what was saved; a fragment the user may not read reaches neither the
// model nor the client.
func TestAgenticTurnThroughTheFacade(t *testing.T) {
	w := routetest.NewWorld(t, routetest.WithConfig(func(cfg *podconfig.RouteConfig) { cfg.Mode = podconfig.ModeAgentic }))
	steps := []testenv.ScriptedToolCall{
		{Name: "search", Arguments: `{"query":"sync waves"}`},
		{Name: "search", Arguments: `{"query":"admin password secret"}`},
		{Name: "search", Arguments: `{"query":"pruning git"}`},
		{Name: "search", Arguments: `{"query":"sync panel button"}`},
		{Name: "search", Arguments: `{"query":"resources healthy"}`},
		{Name: "save", Arguments: `{"fragments":[{"id":"F1","note":"orders waves"}],"closed":["order"],"open":["hooks"],"next":"hooks"}`},
		{Name: "finalize", Arguments: `{"fragments":["F1"],"closed":["order","hooks"],"open":[]}`},
	}
	var mu sync.Mutex
	next := 0
	w.Models.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		if len(req.Tools) == 0 {
			return testenv.ChatReply{Content: "Lower waves go first [S1]."}
		}
		mu.Lock()
		defer mu.Unlock()
		if next == len(steps) {
			return testenv.ChatReply{Content: "done"}
		}
		next++
		return testenv.ChatReply{ToolCalls: steps[next-1 : next]}
	}
	srv := serve(t, w)

	resp := do(t, "POST", srv.URL+"/v1/chat/completions", "ann", `{"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Ragroute struct {
			Sources []turn.RetrievalSource `json:"sources"`
			Harness []struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			} `json:"harness"`
		} `json:"ragroute"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.Choices[0].Message.Content; got != "Lower waves go first [S1]." {
		t.Errorf("answer %q", got)
	}
	var types []string
	for _, step := range out.Ragroute.Harness {
		types = append(types, step.Type)
	}
	if got := strings.Join(types, ","); !strings.HasPrefix(got, "round.started,tool.call,retrieval,") || !strings.Contains(got, "memory.saved,round.started,tool.call,finalized") {
		t.Errorf("harness trace %s", got)
	}
	if len(out.Ragroute.Sources) != 1 || out.Ragroute.Sources[0].Marker != "S1" {
		t.Errorf("sources %+v: want the one finalized fragment as S1", out.Ragroute.Sources)
	}

	seen := w.Models.Seen()
	round2 := seen[6] // after five searches and the save
	if len(round2.Messages) != 2 || round2.Messages[0].Role != "system" || round2.Messages[1].Role != "user" {
		t.Fatalf("round 2's request: %+v", round2.Messages)
	}
	window := round2.Messages[1].Content
	for _, want := range []string{"Question: How are sync waves ordered?", " note F1\norders waves\n", "Parts still open: hooks"} {
		if !strings.Contains(window, want) {
			t.Errorf("round 2's window lacks %q:\n%s", want, window)
		}
	}
	if strings.Count(window, " end F") != 1 {
		t.Errorf("round 2's window holds other fragments than the saved one:\n%s", window)
	}
	for i, req := range seen {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "argocd-initial-admin-secret") {
				t.Errorf("model request %d holds the admins' fragment", i)
			}
		}
	}
	if strings.Contains(string(body), "argocd-initial-admin-secret") || strings.Contains(string(body), "secrets.md") {
		t.Errorf("the response names the admins' fragment: %s", body)
	}
}
