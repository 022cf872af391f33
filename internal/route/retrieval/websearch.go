package retrieval

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
)

// WebSearch is the web_search tool: an HTTP search endpoint in the common
// shape POST {baseURL}/search {"query","max_results"} →
// {"results":[{"title","url","content"}]} (Tavily and compatible
// gateways). Results are public: no ACL applies. They are anyone's text,
// so each is flagged as ingestion flags a chunk (ingest.FlagReason) and
// the route's flaggedFragments policy applies to it as to a document's.
type WebSearch struct {
	BaseURL    string
	APIKey     string
	MaxResults int
	HTTP       *http.Client
}

// Search returns the results as fragments.
func (ws *WebSearch) Search(ctx context.Context, query string) (Retrieval, error) {
	r := Retrieval{Query: query, Intent: IntentConcept, Timings: map[string]time.Duration{}}
	start := time.Now()
	var out struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	endpoint := jsonEndpoint{BaseURL: ws.BaseURL, APIKey: ws.APIKey, HTTP: ws.HTTP}
	if err := endpoint.post(ctx, "/search", 20*time.Second, 4<<20, map[string]any{"query": query, "max_results": ws.MaxResults}, &out); err != nil {
		return r, fmt.Errorf("web search at %w", err)
	}
	for i, res := range out.Results {
		if i >= ws.MaxResults {
			break
		}
		r.Fragments = append(r.Fragments, Fragment{ID: "web:" + res.URL, DocID: res.URL, Source: res.URL, SourceURI: res.URL,
			Title: res.Title, Kind: "web", Text: res.Content,
			// No embedder scored it: the engine's result counts as a match.
			Score: 1, Similarity: 1,
			// The title reaches the model too, on the fragment's opening line.
			Flagged: ingest.FlagReason(res.Title + "\n\n" + res.Content)})
	}
	r.Timings["web_search"] = time.Since(start)
	return r, nil
}
