package retrieval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/tokenize"
)

func TestCrossEncoderReordersTheTopN(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if r.URL.Path != "/rerank" || req.Query != "q" || len(req.Documents) != 2 || req.Documents[1] != "Guide › Setup\n\nb" {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		// The second document is the relevant one.
		_, _ = w.Write([]byte(`{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}`))
	}))
	defer server.Close()
	ce := &CrossEncoder{BaseURL: server.URL, Model: "m", TopN: 2, HTTP: server.Client()}
	out, err := ce.Rerank(context.Background(), "q", []Fragment{{ID: "a", Text: "a"},
		{ID: "b", Title: "Guide", HeadingPath: []string{"Guide", "Setup"}, Text: "b", Score: 0.4, Similarity: 0.4}, {ID: "c", Text: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	// c was not rescored: its similarity says nothing on the relevance's
	// scale, so it must not pass the strict floor beside them.
	if len(out) != 2 || out[0].ID != "b" || out[0].Score != 0.9 || out[1].ID != "a" {
		t.Errorf("reranked %+v, want b then a, c dropped", out)
	}
	// The cosine stays beside the relevance, for the settings documented
	// as cosines (diversity margin, researchBelow).
	if out[0].Similarity != 0.4 {
		t.Errorf("b's similarity %g after the rerank, want its cosine 0.4", out[0].Similarity)
	}
}

// With maxDocumentTokens the cross-encoder reads each fragment's label
// and the first N tokens of its text, cut at a word; the label is never
// cut, and a shorter text goes whole.
func TestCrossEncoderReadsTheFirstTokensUnderTheLabel(t *testing.T) {
	var got []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Documents []string `json:"documents"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		got = req.Documents
		_, _ = w.Write([]byte(`{"results":[{"index":0,"relevance_score":0.9},{"index":1,"relevance_score":0.1}]}`))
	}))
	defer server.Close()
	ce := &CrossEncoder{BaseURL: server.URL, Model: "m", TopN: 2, HTTP: server.Client(), MaxDocumentTokens: 4, Tokens: tokenize.NewBERTUncased()}
	long := Fragment{ID: "a", Title: "Sync waves and hooks", HeadingPath: []string{"Sync waves and hooks"}, Text: "Resources apply in waves, lowest first, then hooks run."}
	short := Fragment{ID: "b", Title: "Guide", Text: "Set up."}
	if _, err := ce.Rerank(context.Background(), "q", []Fragment{long, short}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Sync waves and hooks\n\nResources apply in", "Guide\n\nSet up."}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("documents sent %q, want %q", got, want)
	}
}

// A rate-limited or restarting reranker is retried, after the wait it
// asks for, with the same request body.
func TestCrossEncoderRetries429And503(t *testing.T) {
	var calls atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Documents []string `json:"documents"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "2")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		case 2:
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		if len(req.Documents) != 2 {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(`{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}`))
	}))
	defer server.Close()
	var waits []time.Duration
	ce := &CrossEncoder{BaseURL: server.URL, Model: "m", TopN: 2, HTTP: server.Client(), Retry: model.RetryPolicy{
		Sleep:  func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
		Jitter: func(ceiling time.Duration) time.Duration { return ceiling },
	}}
	out, err := ce.Rerank(context.Background(), "q", []Fragment{{ID: "a", Text: "a"}, {ID: "b", Text: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].ID != "b" || calls.Load() != 3 || ce.Retries() != 2 || len(waits) != 2 || waits[0] != 2*time.Second {
		t.Errorf("reranked %+v after %d calls, %d retries, waits %v", out, calls.Load(), ce.Retries(), waits)
	}
}

// With a first-stage weight, a candidate the store ranked first keeps its
// place against one the cross-encoder only slightly prefers; at 0 the
// relevance alone orders them. The relevance stays the score either way.
func TestCrossEncoderFusesTheFirstStageOrder(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// The cross-encoder ranks the store's third candidate first, its
		// first second, its second last.
		_, _ = w.Write([]byte(`{"results":[{"index":2,"relevance_score":0.7},{"index":0,"relevance_score":0.6},{"index":1,"relevance_score":0.1}]}`))
	}))
	defer server.Close()
	in := []Fragment{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	for _, tc := range []struct {
		weight float64
		want   string
	}{{0, "c a b"}, {1, "a c b"}} {
		ce := &CrossEncoder{BaseURL: server.URL, Model: "m", TopN: 3, FirstStageWeight: tc.weight, HTTP: server.Client()}
		out, err := ce.Rerank(context.Background(), "q", in)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, f := range out {
			ids = append(ids, f.ID)
		}
		if got := strings.Join(ids, " "); got != tc.want {
			t.Errorf("first-stage weight %g: order %s, want %s", tc.weight, got, tc.want)
		}
		if out[0].ID == "a" && out[0].Score != 0.6 {
			t.Errorf("a's score is %g, want its relevance 0.6", out[0].Score)
		}
	}
}
