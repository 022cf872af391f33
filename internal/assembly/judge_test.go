package assembly

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// The route's judge is a client of its own: the judge's endpoint and
// model, the key from the variable its config names (never the chat
// model's), asked greedily under the verdicts' schema.
func TestTheEngineAsksTheConfiguredJudge(t *testing.T) {
	var got struct {
		auth string
		body map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		got.auth = r.Header.Get("Authorization")
		_ = json.Unmarshal(raw, &got.body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"{\"verdicts\":[]}"}}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	cfg := podconfig.RouteConfig{
		Store: podconfig.Store{Embedding: podconfig.Embedding{BaseURL: "http://embedder.invalid/v1", Model: "m", Dimensions: 8}},
		Model: podconfig.ChatModel{BaseURL: "http://chat.invalid/v1", Name: "small", APIKeyEnv: podconfig.EnvModelAPIKey},
		Answer: podconfig.Answer{Judge: &podconfig.Judge{BaseURL: srv.URL, Name: "big", APIKeyEnv: podconfig.EnvJudgeAPIKey},
			Grounding: podconfig.Grounding{Scorer: podconfig.GroundingJudge}},
	}
	secrets := Secrets(func(name string) string {
		return map[string]string{podconfig.EnvJudgeAPIKey: "judge-key", podconfig.EnvModelAPIKey: "chat-key"}[name]
	})
	engine, err := NewEngine(cfg, NewSearcher(cfg, Parts{Secrets: secrets}), Parts{Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	if engine.Answer.Judge == nil || engine.Answer.Grounding.Scorer != podconfig.GroundingJudge {
		t.Fatalf("the engine has no judge scorer: %+v", engine.Answer)
	}
	messages, gen := turn.JudgeRequest(answer.JudgePrompt{System: "judge", User: "claims", SchemaName: "grounding_verdicts", Schema: []byte(`{"type":"object"}`)})
	reply, err := engine.Answer.Judge.Stream(context.Background(), messages, nil, gen, nil)
	if err != nil || reply.Content != `{"verdicts":[]}` {
		t.Fatalf("judge reply %+v, %v", reply, err)
	}
	temperature, _ := got.body["temperature"].(float64)
	if got.auth != "Bearer judge-key" || got.body["model"] != "big" || temperature <= 0 || temperature > 0.01 || got.body["response_format"] == nil {
		t.Errorf("the judge was asked with %q: %v", got.auth, got.body)
	}
}
