package model

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// recorder remembers what it was asked to embed.
type recorder struct{ texts []string }

func (r *recorder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r.texts = append(r.texts, texts...)
	return make([][]float32, len(texts)), nil
}

func TestWithPrefixPutsThePrefixInFront(t *testing.T) {
	inner := &recorder{}
	e := WithPrefix(inner, "query: ", 0, tokenize.NewInputCounter())
	if _, err := e.Embed(context.Background(), []string{"how do sync waves work?", ""}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"query: how do sync waves work?", "query: "}; !slices.Equal(inner.texts, want) {
		t.Errorf("embedded %q, want %q", inner.texts, want)
	}
	if WithPrefix(inner, "", 256, tokenize.NewInputCounter()) != Embedder(inner) {
		t.Error("an empty prefix wrapped the embedder")
	}
}

func TestWithPrefixCutLeavesRoomForThePrefix(t *testing.T) {
	counter := tokenize.NewBERTUncased()
	long := strings.Repeat("Sync waves order the apply of resources in one sync. ", 60)
	const limit = 64
	inner := &recorder{}
	prefix := "Represent this sentence for searching relevant passages: "
	e := WithPrefix(inner, prefix, limit, tokenize.NewInputCounter())
	if _, err := e.Embed(context.Background(), []string{long, "short question"}); err != nil {
		t.Fatal(err)
	}
	got := inner.texts[0]
	if !strings.HasPrefix(got, prefix) {
		t.Fatalf("the cut lost the prefix: %q", got)
	}
	// The model adds [CLS] and [SEP]: its limit counts them.
	if n := counter.Count(got) + tokenize.SpecialTokens; n > limit || n < limit-8 {
		t.Errorf("prefix + cut text is %d tokens with the special tokens, want at most %d and not much less", n, limit)
	}
	if want := prefix + tokenize.Truncate(counter, long, limit-tokenize.SpecialTokens-counter.Count(prefix)); got != want {
		t.Errorf("cut text\n%q\nwant\n%q", got, want)
	}
	if inner.texts[1] != prefix+"short question" {
		t.Errorf("a text within the limit was changed: %q", inner.texts[1])
	}

	// Through the real client, the server sees the prefix and the text
	// cut to fit: the client's own cut at the limit changes nothing more.
	server := testenv.StartModelServer(16)
	defer server.Close()
	client := NewEmbeddings(EmbeddingsConfig{BaseURL: server.BaseURL(), Model: "m", Dimensions: 16, MaxInputTokens: limit})
	vectors, err := WithPrefix(client, "query: ", limit, tokenize.NewInputCounter()).Embed(context.Background(), []string{long})
	if err != nil {
		t.Fatal(err)
	}
	sent := "query: " + tokenize.Truncate(counter, long, limit-tokenize.SpecialTokens-counter.Count("query: "))
	want, _ := (&testenv.HashEmbedder{Dim: 16}).Embed(context.Background(), []string{sent})
	if !slices.Equal(vectors[0], want[0]) {
		t.Error("the server did not receive the prefix and the text cut to fit behind it")
	}
}

func TestWithPrefixRefusesAPrefixThatLeavesNoRoom(t *testing.T) {
	e := WithPrefix(&recorder{}, "Represent this sentence for searching relevant passages: ", 8, tokenize.NewInputCounter())
	if _, err := e.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "leaving nothing of the embedder's 8-token input") {
		t.Errorf("error %v, want one that says the prefix leaves no room", err)
	}
}
