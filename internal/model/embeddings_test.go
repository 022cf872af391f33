package model

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/tokenize"
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

func TestEmbeddingsCutInputsAtTheModelsLimit(t *testing.T) {
	server := testenv.StartModelServer(16)
	defer server.Close()
	long := strings.Repeat("Sync waves order the apply of resources in one sync. ", 60)
	e := NewEmbeddings(EmbeddingsConfig{BaseURL: server.BaseURL(), Model: "m", Dimensions: 16, MaxInputTokens: 256})
	got, err := e.Embed(context.Background(), []string{long, "short question"})
	if err != nil {
		t.Fatal(err)
	}
	hash := &testenv.HashEmbedder{Dim: 16}
	// 256 with [CLS] and [SEP]: 254 of the text.
	cut := tokenize.Truncate(tokenize.NewBERTUncased(), long, 256-tokenize.SpecialTokens)
	want, _ := hash.Embed(context.Background(), []string{cut, "short question"})
	whole, _ := hash.Embed(context.Background(), []string{long})
	if !slices.Equal(got[0], want[0]) || slices.Equal(got[0], whole[0]) {
		t.Error("the server did not receive the input cut at 256 tokens")
	}
	if !slices.Equal(got[1], want[1]) {
		t.Error("an input within the limit was changed")
	}
}

// A word over BERT's 100-character limit is one [UNK] to BERT but many
// pieces to llama.cpp, which then refused the input as too long (a
// 512-token cut of a page with SSH host keys reached 645 tokens there).
// The cut counts such a word one token per character.
func TestEmbeddingsCutCountsOverlongWordsByCharacter(t *testing.T) {
	server := testenv.StartModelServer(16)
	defer server.Close()
	key := "AAAAB3NzaC1yc2EAAAADAQABAAABgQC" + strings.Repeat("x7Qp2Lw9", 40) // 351 characters
	text := "Known hosts: " + key + " github.com " + key + " gitlab.com"
	e := NewEmbeddings(EmbeddingsConfig{BaseURL: server.BaseURL(), Model: "m", Dimensions: 16, MaxInputTokens: 512})
	got, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	if n := tokenize.NewBERTUncased().Count(text); n > 100 {
		t.Fatalf("BERT counts %d tokens; the test needs a text BERT thinks is short", n)
	}
	want, _ := (&testenv.HashEmbedder{Dim: 16}).Embed(context.Background(), []string{"Known hosts: " + key + " github.com"})
	if !slices.Equal(got[0], want[0]) {
		t.Error("the input was not cut before the second key (an upper bound of 512 tokens for any server)")
	}
}

// A server can answer vectors that are valid JSON yet no finite vector
// for a cosine: components near float32's limit, whose squared length is
// infinite in float32 (NaN or an infinity itself cannot be JSON). Such a
// vector is refused, naming the endpoint, the model and the input.
func TestEmbeddingsRefuseVectorsThatAreNotFinite(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[`+
			`{"object":"embedding","index":0,"embedding":[0.5,0.5,0.5,0.5]},`+
			`{"object":"embedding","index":1,"embedding":[3e38,3e38,0,0]}],"model":"m"}`)
	}))
	defer server.Close()
	e := NewEmbeddings(EmbeddingsConfig{BaseURL: server.URL + "/v1", Model: "m", Dimensions: 4})
	vectors, err := e.Embed(context.Background(), []string{"fine", "overflowing"})
	if !errors.Is(err, ErrNotFinite) || vectors != nil {
		t.Fatalf("Embed() = %v, %v; want ErrNotFinite and no vectors", vectors, err)
	}
	for _, want := range []string{server.URL, "model m", "input 1", "overflows float32"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestFiniteRefusesNaNAndInfinities(t *testing.T) {
	for _, v := range [][]float32{
		{0, float32(math.NaN())},
		{float32(math.Inf(1)), 0},
		{float32(math.Inf(-1))},
	} {
		if err := finite(v); err == nil {
			t.Errorf("finite(%v) = nil, want an error", v)
		}
	}
	if err := finite([]float32{1e18, -1e18, 0.25}); err != nil {
		t.Errorf("a large finite vector was refused: %v", err)
	}
}
