package lab

import (
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// vectorCache remembers an embedder's vectors by text, on disk, so a
// second eval run with the same embedder embeds only what changed: the
// corpus is embedded once per embedder, not once per run.
type vectorCache struct {
	inner knowledge.Embedder
	file  string // empty: in memory only

	mu      sync.Mutex
	vectors map[string][]float32
	added   int
}

// newVectorCache loads the cache of the embedder named by key from dir
// (no dir: a cache for this run only).
func newVectorCache(inner knowledge.Embedder, dir, key string) (*vectorCache, error) {
	c := &vectorCache{inner: inner, vectors: map[string][]float32{}}
	if dir == "" {
		return c, nil
	}
	sum := sha256.Sum256([]byte(key))
	c.file = filepath.Join(dir, "vectors-"+hex.EncodeToString(sum[:8])+".gob")
	f, err := os.Open(c.file)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	defer f.Close()
	if err := gob.NewDecoder(f).Decode(&c.vectors); err != nil {
		// A torn or old file costs one re-embedding, not the run.
		c.vectors = map[string][]float32{}
	}
	return c, nil
}

// Embed returns cached vectors and embeds the rest in one call.
func (c *vectorCache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []string
	var at []int
	c.mu.Lock()
	for i, t := range texts {
		if v, ok := c.vectors[textKey(t)]; ok {
			out[i] = v
		} else {
			missing, at = append(missing, t), append(at, i)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	vectors, err := c.inner.Embed(ctx, missing)
	if err != nil {
		return nil, err
	}
	if len(vectors) != len(missing) {
		return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vectors), len(missing))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, v := range vectors {
		out[at[j]] = v
		c.vectors[textKey(missing[j])] = v
	}
	c.added += len(vectors)
	return out, nil
}

// save writes the cache when this run added vectors.
func (c *vectorCache) save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == "" || c.added == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.file), 0o755); err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	tmp := c.file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	if err := gob.NewEncoder(f).Encode(c.vectors); err != nil {
		f.Close()
		return fmt.Errorf("vector cache: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	return os.Rename(tmp, c.file)
}

func textKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return string(sum[:16])
}
