package retrieval

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/tokenize"
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
// {"results":[{"index","relevance_score"}]}, relevance in [0, 1]. The
// relevance replaces the similarity as the fragments' score, so the strict
// floor then applies to it; candidates past the top N are dropped, as no
// score on the same scale says whether they answer.
type CrossEncoder struct {
	BaseURL string
	Model   string
	APIKey  string
	TopN    int
	// FirstStageWeight weighs the first stage's (fused) order beside the
	// cross-encoder's: the fragments are ordered by reciprocal-rank fusion
	// of both (rerankRRFK), so a model trained on web questions does not
	// overturn what the store's own search is sure of. 0 orders by
	// relevance alone.
	FirstStageWeight float64
	// MaxDocumentTokens cuts each fragment's text to its first N tokens
	// (counted by Tokens, at a word boundary) under its label: a
	// cross-encoder's time grows with what it reads, and a section's
	// opening says most of what it is about. 0 sends the text whole.
	MaxDocumentTokens int
	Tokens            tokenize.Counter
	HTTP              *http.Client
	// Retry says how a 429, a 503 or a refused or reset connection is
	// retried within the call's 30s; the zero value is
	// model.DefaultRetryPolicy.
	Retry model.RetryPolicy

	retries atomic.Int64
}

// Retries is how many rerank requests were retried so far.
func (c *CrossEncoder) Retries() int64 { return c.retries.Load() }

// DefaultFirstStageWeight is a cross-encoder's first-stage weight when the
// route names none (v1alpha1.DefaultCrossEncoderFirstStageWeight says why).
const DefaultFirstStageWeight = 1.0

// rerankRRFK is the reciprocal-rank constant that fuses the two orders:
// small, as only the first TopN are ranked (RRF's 60 flattens a list of
// ten).
const rerankRRFK = 10

// Rerank orders the first TopN fragments by relevance and the first
// stage's order, and drops the rest. Each is read under its label
// (title › headings): a section's text often leaves out what its
// headings say it is about.
func (c *CrossEncoder) Rerank(ctx context.Context, query string, fragments []Fragment) ([]Fragment, error) {
	n := min(c.TopN, len(fragments))
	if n == 0 {
		return fragments, nil
	}
	docs := make([]string, n)
	for i := range docs {
		text := fragments[i].Text
		if c.MaxDocumentTokens > 0 {
			text = tokenize.Truncate(c.Tokens, text, c.MaxDocumentTokens)
		}
		docs[i] = fragments[i].Label() + "\n\n" + text
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
	type rescored struct {
		index        int
		score, fused float64
	}
	var head []rescored
	seen := map[int]bool{}
	for _, r := range out.Results {
		if r.Index < 0 || r.Index >= n || seen[r.Index] {
			return nil, fmt.Errorf("rerank at %s: bad or repeated index %d", c.BaseURL, r.Index)
		}
		seen[r.Index] = true
		head = append(head, rescored{index: r.Index, score: r.Score})
	}
	sort.SliceStable(head, func(i, j int) bool { return head[i].score > head[j].score })
	for rank := range head {
		head[rank].fused = 1/float64(rerankRRFK+rank) + c.FirstStageWeight/float64(rerankRRFK+head[rank].index)
	}
	sort.SliceStable(head, func(i, j int) bool { return head[i].fused > head[j].fused })
	reranked := make([]Fragment, len(head))
	for i, h := range head {
		reranked[i] = fragments[h.index]
		reranked[i].Score = h.score
	}
	return reranked, nil
}

// ScoresRelevance says whether the searcher's fragments are scored by a
// reranker's relevance (Fragment.Score) rather than their similarity.
func (s *Searcher) ScoresRelevance() bool {
	_, keep := s.Reranker.(KeepOrder)
	return s.Reranker != nil && !keep
}
