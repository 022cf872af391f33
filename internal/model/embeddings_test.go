package model

import (
	"context"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/testenv"
)

func TestEmbeddingsAgainstScriptedServer(t *testing.T) {
	server := testenv.StartModelServer(16)
	defer server.Close()
	e := NewEmbeddings(EmbeddingsConfig{BaseURL: server.BaseURL(), Model: "m", Dimensions: 16})
	vectors, err := e.Embed(context.Background(), []string{"sync waves", "prune last"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := (&testenv.HashEmbedder{Dim: 16}).Embed(context.Background(), []string{"sync waves", "prune last"})
	for i := range want {
		for j := range want[i] {
			if vectors[i][j] != want[i][j] {
				t.Fatalf("vector %d differs from the server's", i)
			}
		}
	}

	wrong := NewEmbeddings(EmbeddingsConfig{BaseURL: server.BaseURL(), Model: "m", Dimensions: 384})
	if _, err := wrong.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "16 dimensions, the KnowledgeStore says 384") {
		t.Errorf("dimension mismatch not named: %v", err)
	}
	down := NewEmbeddings(EmbeddingsConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if _, err := down.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("unreachable endpoint not named: %v", err)
	}
}
