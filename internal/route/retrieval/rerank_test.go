package retrieval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/model"
)

func TestCrossEncoderReordersTheTopN(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if r.URL.Path != "/rerank" || req.Query != "q" || len(req.Documents) != 2 {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		// The second document is the relevant one.
		_, _ = w.Write([]byte(`{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}`))
	}))
	defer server.Close()
	ce := &CrossEncoder{BaseURL: server.URL, Model: "m", TopN: 2, HTTP: server.Client()}
	out, err := ce.Rerank(context.Background(), "q", []Fragment{{ID: "a", Text: "a"}, {ID: "b", Text: "b"}, {ID: "c", Text: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].ID != "b" || out[0].Score != 0.9 || out[1].ID != "a" || out[2].ID != "c" {
		t.Errorf("reranked %+v", out)
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
