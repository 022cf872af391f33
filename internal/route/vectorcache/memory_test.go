package vectorcache

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
)

// countingEmbedder embeds each text as its length and records what it was
// sent.
type countingEmbedder struct{ sent []string }

func (e *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.sent = append(e.sent, texts...)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1}
	}
	return out, nil
}

// checkCachedEmbedder: a text is embedded once per embedder identity, the
// vectors come back in the caller's order, and another identity never
// reuses them.
func checkCachedEmbedder(t *testing.T, cache Cache) {
	t.Helper()
	ctx := context.Background()
	inner := &countingEmbedder{}
	e := Embedder{Embedder: inner, Cache: cache, Identity: "a"}
	if _, err := e.Embed(ctx, []string{"one", "three"}); err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(ctx, []string{"three", "fourth", "one"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0][0] != 5 || got[1][0] != 6 || got[2][0] != 3 {
		t.Errorf("vectors %v out of order", got)
	}
	if !slices.Equal(inner.sent, []string{"one", "three", "fourth"}) {
		t.Errorf("sent %q: want each text once", inner.sent)
	}
	other := Embedder{Embedder: inner, Cache: cache, Identity: "b"}
	if _, err := other.Embed(ctx, []string{"one"}); err != nil {
		t.Fatal(err)
	}
	if n := len(inner.sent); n != 4 {
		t.Errorf("another embedder's identity reused a vector (%d texts sent)", n)
	}
}

func TestMemoryVectorCacheEmbedsEachTextOnce(t *testing.T) {
	checkCachedEmbedder(t, NewMemory(1<<20))
}

func TestRedisVectorCacheEmbedsEachTextOnce(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	checkCachedEmbedder(t, NewRedis(client, sealtest.New(t), fmt.Sprintf("t%d:", time.Now().UnixNano()), time.Minute))
}

// The memory cache stays within its bytes, dropping the least recently
// used vectors first.
func TestMemoryVectorCacheIsBoundedByBytes(t *testing.T) {
	ctx := context.Background()
	entry := 4*384 + vectorEntryOverhead
	c := NewMemory(3 * entry).(*memoryCache)
	put := func(k string) { c.Put(ctx, []string{k}, [][]float32{make([]float32, 384)}) }
	put("a")
	put("b")
	put("c")
	c.Get(ctx, []string{"a"})
	put("d") // evicts b, the least recently used
	got := c.Get(ctx, []string{"a", "b", "c", "d"})
	if got[0] == nil || got[1] != nil || got[2] == nil || got[3] == nil || c.Len() != 3 || c.bytes > 3*entry {
		t.Errorf("held a=%v b=%v c=%v d=%v, %d entries, %d bytes", got[0] != nil, got[1] != nil, got[2] != nil, got[3] != nil, c.Len(), c.bytes)
	}
}
