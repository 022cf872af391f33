package retrieval

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/ragroute/ragroute/internal/model"
)

// Reranker orders candidates that passed the similarity floor. The v1
// route keeps the fused order; a cross-encoder plugs in here.
type Reranker interface {
	Rerank(ctx context.Context, query string, fragments []Fragment) ([]Fragment, error)
}

// KeepOrder is the v1 reranker: the RRF order stands.
type KeepOrder struct{}

// Rerank returns fragments unchanged.
func (KeepOrder) Rerank(_ context.Context, _ string, fragments []Fragment) ([]Fragment, error) {
	return fragments, nil
}

// CrossEncoder rescores the top N candidates with a rerank model served
// in the common /rerank shape (Cohere, Jina, vLLM):
// POST {baseURL}/rerank {"model","query","documents","top_n"} →
// {"results":[{"index","relevance_score"}]}. Scores replace the RRF
// scores, so the strict floor then applies to relevance.
type CrossEncoder struct {
	BaseURL string
	Model   string
	APIKey  string
	TopN    int
	HTTP    *http.Client
	// Retry says how a 429, a 503 or a refused or reset connection is
	// retried within the call's 30s; the zero value is
	// model.DefaultRetryPolicy.
	Retry model.RetryPolicy

	retries atomic.Int64
}

// Retries is how many rerank requests were retried so far.
func (c *CrossEncoder) Retries() int64 { return c.retries.Load() }

// Rerank orders the first TopN fragments by relevance; the rest follow in
// their fused order.
func (c *CrossEncoder) Rerank(ctx context.Context, query string, fragments []Fragment) ([]Fragment, error) {
	n := min(c.TopN, len(fragments))
	if n == 0 {
		return fragments, nil
	}
	docs := make([]string, n)
	for i := range docs {
		docs[i] = fragments[i].Text
	}
	var out struct {
		Results []struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		} `json:"results"`
	}
	retrying := &http.Client{Transport: c.Retry.Transport(nil, &c.retries)}
	if c.HTTP != nil {
		retrying = &http.Client{Transport: c.Retry.Transport(c.HTTP.Transport, &c.retries),
			CheckRedirect: c.HTTP.CheckRedirect, Jar: c.HTTP.Jar, Timeout: c.HTTP.Timeout}
	}
	endpoint := jsonEndpoint{BaseURL: c.BaseURL, APIKey: c.APIKey, HTTP: retrying}
	in := map[string]any{"model": c.Model, "query": query, "documents": docs, "top_n": n}
	if err := endpoint.post(ctx, "/rerank", 30*time.Second, 1<<20, in, &out); err != nil {
		return nil, fmt.Errorf("rerank at %w", err)
	}
	head := make([]Fragment, 0, n)
	seen := map[int]bool{}
	for _, r := range out.Results {
		if r.Index < 0 || r.Index >= n || seen[r.Index] {
			return nil, fmt.Errorf("rerank at %s: bad or repeated index %d", c.BaseURL, r.Index)
		}
		seen[r.Index] = true
		f := fragments[r.Index]
		f.Score = r.Score
		head = append(head, f)
	}
	sort.SliceStable(head, func(i, j int) bool { return head[i].Score > head[j].Score })
	return append(head, fragments[n:]...), nil
}
