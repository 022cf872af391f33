package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	// The turn's event types; route is this package's QueryRoute Service.
	events "github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnstream"
)

// caller is who asks the route: the trusted proxy's headers and secret,
// as the authenticating proxy in front of the route sends them.
type caller struct {
	user, groups string
}

// route is a QueryRoute's Service as a client on the host reaches it.
type route struct {
	url, proxyHeader, proxySecret string
}

// answer is what a turn's events said.
type answer struct {
	sources  []string // source_uri of every fragment the answer may use
	notFound bool
	text     string
}

func (r route) request(ctx context.Context, who caller, method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Forwarded-User", who.user)
	req.Header.Set("X-Forwarded-Groups", who.groups)
	req.Header.Set(r.proxyHeader, r.proxySecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(msg))
	}
	return resp, nil
}

// ask submits a turn and reads its event stream to the end.
func (r route) ask(ctx context.Context, who caller, question string) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": question}}})
	resp, err := r.request(ctx, who, http.MethodPost, "/v1/turns", body)
	if err != nil {
		return answer{}, err
	}
	var submitted struct {
		StreamURL string `json:"stream_url"`
	}
	err = json.NewDecoder(resp.Body).Decode(&submitted)
	_ = resp.Body.Close()
	if err != nil {
		return answer{}, fmt.Errorf("submit: %w", err)
	}
	stream, err := r.request(ctx, who, http.MethodGet, submitted.StreamURL, nil)
	if err != nil {
		return answer{}, err
	}
	defer stream.Body.Close()
	return readTurn(stream.Body)
}

// readTurn reads a turn's server-sent events.
func readTurn(body io.Reader) (answer, error) {
	var a answer
	err := turnstream.Read(body, func(e events.Event) error {
		switch data := e.Data.(type) {
		case events.RetrievalReport:
			for _, s := range data.Sources {
				a.sources = append(a.sources, s.SourceURI)
			}
		case events.Delta:
			a.text += data.Text
		case events.Failed:
			return fmt.Errorf("the turn failed: %s: %s", data.Code, data.Message)
		case events.Completed:
			a.notFound = data.NotFound
		}
		return nil
	})
	return a, err
}

// complete asks through the OpenAI-compatible facade, one request that
// streams the whole answer: what a chat client sends.
func (r route) complete(ctx context.Context, who caller, question string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"stream": true, "messages": []map[string]string{{"role": "user", "content": question}}})
	resp, err := r.request(ctx, who, http.MethodPost, "/v1/chat/completions", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read the stream: %w", err)
	}
	if !bytes.Contains(data, []byte("data: [DONE]")) || bytes.Contains(data, []byte(`"error"`)) {
		return fmt.Errorf("the stream did not complete: %s", bytes.TrimSpace(data[max(0, len(data)-300):]))
	}
	return nil
}

func (a answer) from(source string) bool {
	for _, s := range a.sources {
		if strings.Contains(s, source) {
			return true
		}
	}
	return false
}
