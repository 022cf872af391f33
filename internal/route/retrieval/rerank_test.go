package retrieval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
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
