package route

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// WebSearch is the web_search tool: an HTTP search endpoint in the common
// shape POST {baseURL}/search {"query","max_results"} →
// {"results":[{"title","url","content"}]} (Tavily and compatible
// gateways). Results are public: no ACL applies.
type WebSearch struct {
	BaseURL    string
	APIKey     string
	MaxResults int
	HTTP       *http.Client
}

const webSearchToolName = "web_search"

var webSearchTool = toolSpec(webSearchToolName,
	"Search the public web. Use it only for questions the organisation's documentation cannot answer, such as recent public events.")

// Search returns the results as fragments.
func (ws *WebSearch) Search(ctx context.Context, query string) (Retrieval, error) {
	r := Retrieval{Query: query, Intent: IntentConcept, Timings: map[string]time.Duration{}}
	start := time.Now()
	body, _ := json.Marshal(map[string]any{"query": query, "max_results": ws.MaxResults})
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(ws.BaseURL, "/")+"/search", bytes.NewReader(body))
	if err != nil {
		return r, err
	}
	req.Header.Set("Content-Type", "application/json")
	if ws.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+ws.APIKey)
	}
	resp, err := ws.HTTP.Do(req)
	if err != nil {
		return r, fmt.Errorf("web search at %s: %w", ws.BaseURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return r, fmt.Errorf("web search at %s: %s", ws.BaseURL, resp.Status)
	}
	var out struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 4<<20)).Decode(&out); err != nil {
		return r, fmt.Errorf("web search at %s: %w", ws.BaseURL, err)
	}
	for i, res := range out.Results {
		if i >= ws.MaxResults {
			break
		}
		r.Fragments = append(r.Fragments, Fragment{ID: "web:" + res.URL, DocID: res.URL, Source: res.URL, SourceURI: res.URL,
			Title: res.Title, Kind: "web", Text: res.Content, Score: 1})
	}
	r.Timings["web_search"] = time.Since(start)
	return r, nil
}
