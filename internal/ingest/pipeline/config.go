// Package pipeline is one ingestion run: read the sources, chunk them,
// embed what changed and bring the Milvus collection to exactly those
// chunks (a new generation behind the alias when the embedder changed).
// `ragroute ingest` runs it; the KnowledgeStore controller renders its
// config. It imports nothing from Kubernetes.
package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/ragroute/ragroute/internal/ingest/source"
	"github.com/ragroute/ragroute/internal/routeconfig"
)

// ConfigVersion is the schema version of Config.
const ConfigVersion = 1

// Config is everything one ingestion run needs. Secrets are named by the
// environment variables that carry them, as in the route config.
type Config struct {
	Version   int                   `json:"version"`
	Store     string                `json:"store"`
	Milvus    routeconfig.Milvus    `json:"milvus"`
	Embedding routeconfig.Embedding `json:"embedding"`
	Chunking  Chunking              `json:"chunking"`
	// DefaultPrincipals may read documents that name no principals.
	DefaultPrincipals []string `json:"defaultPrincipals,omitempty"`
	Sources           []Source `json:"sources"`
	// BatchSize is how many chunks are embedded per request.
	BatchSize int `json:"batchSize,omitempty"`
}

// Chunking are the chunker's thresholds.
type Chunking struct {
	MaxTokens        int    `json:"maxTokens"`
	OverlapTokens    int    `json:"overlapTokens"`
	MergeBelowTokens int    `json:"mergeBelowTokens"`
	FrontMatterKey   string `json:"frontMatterKey"`
}

// Source is a folder of Markdown (a mounted ConfigMap or PVC path) or a
// Git repository to clone, and who may read its documents.
type Source struct {
	Name       string      `json:"name"`
	Path       string      `json:"path,omitempty"`
	Git        *source.Git `json:"git,omitempty"`
	Principals []string    `json:"principals,omitempty"`
}

// Fingerprint identifies the embedder: a change of model, dimensions or
// endpoint means a new vector space, so a new generation.
func (c Config) Fingerprint() string {
	sum := sha256.Sum256([]byte(c.Embedding.Model + "\x00" + strconv.Itoa(int(c.Embedding.Dimensions)) + "\x00" + c.Embedding.BaseURL))
	return hex.EncodeToString(sum[:8])
}

// LoadConfig reads and checks a config file, refusing unknown fields.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read ingest config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("parse ingest config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Validate checks what a run relies on.
func (c Config) Validate() error {
	var errs []error
	if c.Version != ConfigVersion {
		errs = append(errs, fmt.Errorf("version %d is not supported (want %d)", c.Version, ConfigVersion))
	}
	if c.Milvus.URI == "" || c.Milvus.Collection == "" {
		errs = append(errs, errors.New("milvus.uri and milvus.collection are required"))
	}
	if c.Embedding.BaseURL == "" || c.Embedding.Model == "" || c.Embedding.Dimensions < 2 {
		errs = append(errs, errors.New("embedding.baseURL, embedding.model and embedding.dimensions are required"))
	}
	if len(c.Sources) == 0 {
		errs = append(errs, errors.New("no sources"))
	}
	for i, s := range c.Sources {
		if s.Name == "" || (s.Path == "") == (s.Git == nil) {
			errs = append(errs, fmt.Errorf("sources[%d] needs a name and exactly one of path or git", i))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid ingest config: %w", err)
	}
	return nil
}
