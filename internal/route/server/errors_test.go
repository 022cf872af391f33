package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
)

// leaks fails when what a client got names an internal endpoint.
func leaks(t *testing.T, what, got string) {
	t.Helper()
	for _, leak := range []string{"http://", "127.0.0.1", "connection refused", "dial tcp"} {
		if strings.Contains(got, leak) {
			t.Errorf("%s leaks %q: %s", what, leak, got)
		}
	}
}

// turnError submits a turn and reads its stream to the end: the error
// event it ended with.
func turnError(t *testing.T, srv string) turn.Failed {
	t.Helper()
	resp := do(t, "POST", srv+"/v1/turns", "ann", `{"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`)
	var sub struct {
		StreamURL string `json:"stream_url"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&sub)
	resp.Body.Close()
	stream := do(t, "GET", srv+sub.StreamURL, "ann", "")
	defer stream.Body.Close()
	events := readSSE(t, stream.Body, 1000)
	if len(events) == 0 || events[len(events)-1].typ != turn.EventError {
		t.Fatalf("the turn did not end with an error: %+v", events)
	}
	leaks(t, "the error event", events[len(events)-1].data)
	var got turn.Failed
	if err := json.Unmarshal([]byte(events[len(events)-1].data), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// completionError asks the facade, streamed and not, and returns the
// error codes and the non-streamed status.
func completionError(t *testing.T, srv string) (code, streamedCode string, status int) {
	t.Helper()
	question := `"messages":[{"role":"user","content":"How are sync waves ordered?"}]`
	resp := do(t, "POST", srv+"/v1/chat/completions", "ann", `{`+question+`}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	status = resp.StatusCode
	leaks(t, "the completion error", string(body))
	var out struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(body, &out)

	resp = do(t, "POST", srv+"/v1/chat/completions", "ann", `{"stream":true,`+question+`}`)
	streamed, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	leaks(t, "the streamed completion error", string(streamed))
	var chunk struct {
		Error struct{ Code string } `json:"error"`
	}
	for _, line := range strings.Split(string(streamed), "\n") {
		if strings.HasPrefix(line, `data: {"error"`) {
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &chunk)
		}
	}
	return out.Error.Code, chunk.Error.Code, status
}

func TestModelRefusingConnectionsIsModelUnavailable(t *testing.T) {
	w := routetest.NewWorld(t, routetest.WithParts(func(p *assembly.Parts) {
		p.Chat = model.NewChat(model.ChatConfig{BaseURL: testenv.RefusedURL(t), Model: "scripted"})
	}))
	srv := serve(t, w)

	if got := turnError(t, srv.URL); got.Code != turn.CodeModelUnavailable {
		t.Errorf("error event %+v, want %s", got, turn.CodeModelUnavailable)
	}
	code, streamed, _ := completionError(t, srv.URL)
	if code != turn.CodeModelUnavailable || streamed != turn.CodeModelUnavailable {
		t.Errorf("completion error %q, streamed %q, want %s", code, streamed, turn.CodeModelUnavailable)
	}
}

func TestModelRateLimitIsRateLimited(t *testing.T) {
	limiting := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(rw, `{"error":{"message":"rate limit reached for http://10.0.0.1","type":"requests"}}`)
	}))
	t.Cleanup(limiting.Close)
	w := routetest.NewWorld(t, routetest.WithParts(func(p *assembly.Parts) {
		p.Chat = model.NewChat(model.ChatConfig{BaseURL: limiting.URL + "/v1", Model: "scripted"})
	}))
	srv := serve(t, w)

	if got := turnError(t, srv.URL); got.Code != turn.CodeRateLimited {
		t.Errorf("error event %+v, want %s", got, turn.CodeRateLimited)
	}
	if code, _, status := completionError(t, srv.URL); code != turn.CodeRateLimited || status != http.StatusTooManyRequests {
		t.Errorf("completion error %q with %d, want %s with 429", code, status, turn.CodeRateLimited)
	}
}

func TestEmbedderDownIsKnowledgeUnavailable(t *testing.T) {
	w := routetest.NewWorld(t, routetest.WithParts(func(p *assembly.Parts) {
		p.Embedder = model.NewEmbeddings(model.EmbeddingsConfig{BaseURL: testenv.RefusedURL(t), Model: "hash", Dimensions: routetest.Dim})
	}))
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "never")
	srv := serve(t, w)

	if got := turnError(t, srv.URL); got.Code != turn.CodeKnowledgeUnavailable {
		t.Errorf("error event %+v, want %s", got, turn.CodeKnowledgeUnavailable)
	}
	resp := do(t, "POST", srv.URL+"/v1/search", "ann", `{"query":"sync waves"}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	leaks(t, "the search error", string(body))
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), turn.CodeKnowledgeUnavailable) {
		t.Errorf("search: %d %s", resp.StatusCode, body)
	}
}

// A model that stalls mid-stream ends the turn at its idle timeout with
// model_timeout, not at the turn's time limit.
func TestStalledModelIsModelTimeout(t *testing.T) {
	w := routetest.NewWorld(t, routetest.WithConfig(func(cfg *podconfig.RouteConfig) {
		cfg.Model.IdleTimeout = podconfig.Duration(100 * time.Millisecond)
	}))
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "never")
	w.Models.ChunkDelay = time.Minute // the first chunk comes, then nothing
	srv := serve(t, w)

	start := time.Now()
	if got := turnError(t, srv.URL); got.Code != turn.CodeModelTimeout {
		t.Errorf("error event %+v, want %s", got, turn.CodeModelTimeout)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the stalled turn took %s", took) // hang detection only
	}
}

// While the model is silent the streamed facade sends SSE comments at the
// keep-alive interval, so an idle-timeout proxy keeps the stream; an
// OpenAI SDK skips them and reads the same answer.
func TestFacadeStreamKeepsAliveWhileTheModelThinks(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = func(testenv.ChatRequest) testenv.ChatReply { return testenv.ChatReply{Content: "Hello."} }
	w.Models.ChunkDelay = 600 * time.Millisecond // serve's keep-alive is 200 ms
	srv := serve(t, w)

	resp := do(t, "POST", srv.URL+"/v1/chat/completions", "ann", `{"stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	var lines []string
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
	}
	resp.Body.Close()
	firstComment, firstContent := -1, -1
	for i, line := range lines {
		switch {
		case line == ": keep-alive" && firstComment < 0:
			firstComment = i
		case strings.Contains(line, `"content":"Hello."`) && firstContent < 0:
			firstContent = i
		case line != "" && line != ": keep-alive" && !strings.HasPrefix(line, "data: "):
			t.Errorf("line %q is neither data nor a comment", line)
		}
	}
	if firstComment < 0 || firstContent < 0 || firstComment > firstContent {
		t.Fatalf("no keep-alive comment before the first delta:\n%s", strings.Join(lines, "\n"))
	}

	cfg := openai.DefaultConfig("unused")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.HTTPClient = &http.Client{Transport: headers{"X-User": "ann", "X-Groups": "staff"}}
	stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(),
		openai.ChatCompletionRequest{Model: "support", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if content := streamedContent(t, stream); content != "Hello." {
		t.Errorf("the SDK read %q", content)
	}
}
