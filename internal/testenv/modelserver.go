package testenv

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// ModelServer is a scripted OpenAI-compatible server on loopback: its
// /embeddings answers with HashEmbedder vectors. Requests counts calls.
type ModelServer struct {
	*httptest.Server
	Embedder *HashEmbedder
	Requests atomic.Int64
}

// StartModelServer starts a model server answering with dim-sized vectors.
func StartModelServer(dim int) *ModelServer {
	m := &ModelServer{Embedder: &HashEmbedder{Dim: dim}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", m.embeddings)
	m.Server = httptest.NewServer(mux)
	return m
}

// BaseURL is the OpenAI-style base URL, ending in /v1.
func (m *ModelServer) BaseURL() string { return m.URL + "/v1" }

func (m *ModelServer) embeddings(w http.ResponseWriter, r *http.Request) {
	m.Requests.Add(1)
	var req struct {
		Input []string `json:"input"`
		Model string   `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	vectors, _ := m.Embedder.Embed(r.Context(), req.Input)
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, v := range vectors {
		resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}
