package scalecorpus

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Two embedder processes behind the round robin each get every other
// call, at their own /v1 paths.
func TestRoundRobinServesEachEmbedderInTurn(t *testing.T) {
	calls := map[string]int{}
	backend := func(name string) string {
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/embeddings" {
				t.Errorf("%s got path %s, want /v1/embeddings", name, r.URL.Path)
			}
			calls[name]++
			_, _ = io.WriteString(w, name)
		}))
		t.Cleanup(server.Close)
		return server.URL + "/v1"
	}
	base := roundRobin(t, backend("a"), backend("b"))
	for range 4 {
		resp, err := http.Post(base+"/embeddings", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	if calls["a"] != 2 || calls["b"] != 2 {
		t.Errorf("calls per embedder %v, want 2 each", calls)
	}
}
