package testenv

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"unicode"
)

// HashEmbedder is a deterministic stand-in for an embedding model: a
// normalised bag of hashed words. Texts that share words get similar
// vectors, so retrieval behaves plausibly, and every run gives the same
// vectors. Calls counts Embed calls and Texts the texts embedded; read
// them once the calls are over (a turn may embed concurrently).
type HashEmbedder struct {
	Dim   int
	Calls int
	Texts int

	mu sync.Mutex
}

// Embed returns one vector per text.
func (e *HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.Calls++
	e.Texts += len(texts)
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, e.Dim)
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			h := fnv.New32a()
			_, _ = h.Write([]byte(w))
			v[h.Sum32()%uint32(e.Dim)]++
		}
		var norm float64
		for _, x := range v {
			norm += float64(x * x)
		}
		if norm == 0 {
			v[0], norm = 1, 1
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(norm))
		}
		out[i] = v
	}
	return out, nil
}
