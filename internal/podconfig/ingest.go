package podconfig

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// IngestVersion is the schema version of IngestConfig.
const IngestVersion = 1

// IngestFileName is the ConfigMap key and file name of the ingest config.
const IngestFileName = "ingest.json"

// IngestConfig is everything one ingestion run needs.
type IngestConfig struct {
	Version   int       `json:"version"`
	Store     string    `json:"store"`
	Milvus    Milvus    `json:"milvus"`
	Embedding Embedding `json:"embedding"`
	Chunking  Chunking  `json:"chunking"`
	// Lexical prepares the text keyword search indexes; routes of the
	// store prepare their queries with the same.
	Lexical Lexical `json:"lexical"`
	// DefaultPrincipals may read documents that name no principals.
	DefaultPrincipals []string `json:"defaultPrincipals,omitempty"`
	Sources           []Source `json:"sources"`
	// BatchSize is how many chunks are embedded per request.
	BatchSize int `json:"batchSize,omitempty"`
	// Concurrency is how many embedding requests are in flight at once.
	Concurrency int `json:"concurrency,omitempty"`
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
	Name string `json:"name"`
	Path string `json:"path,omitempty"`
	// Root is the mount Path lies in: nothing read leaves it, and neither
	// Path nor a folder between Root and Path may be a symbolic link (a
	// PVC writer could otherwise point the source at another mount).
	// Path itself when empty.
	Root       string     `json:"root,omitempty"`
	Git        *GitSource `json:"git,omitempty"`
	Principals []string   `json:"principals,omitempty"`
}

// GitSource is a folder in a Git repository.
type GitSource struct {
	URL string `json:"url"`
	// Ref is a branch, a tag or a full commit hash.
	Ref string `json:"ref"`
	// Path is the folder within the repository; the root when empty.
	Path string `json:"path,omitempty"`
	// CredentialsDir holds the files of a mounted Secret: username and
	// password (HTTPS), or ssh-privatekey and known_hosts (SSH).
	CredentialsDir string `json:"credentialsDir,omitempty"`
	// Timeout bounds the clone; zero: sources.DefaultCloneTimeout.
	Timeout Duration `json:"timeout,omitempty"`
}

// Validate checks what a run relies on.
func (c IngestConfig) Validate() error {
	var errs []error
	if c.Version != IngestVersion {
		errs = append(errs, fmt.Errorf("version %d is not supported (want %d)", c.Version, IngestVersion))
	}
	if c.Milvus.URI == "" || c.Milvus.Collection == "" {
		errs = append(errs, errors.New("milvus.uri and milvus.collection are required"))
	}
	if c.Embedding.BaseURL == "" || c.Embedding.Model == "" || c.Embedding.Dimensions < 2 {
		errs = append(errs, errors.New("embedding.baseURL, embedding.model and embedding.dimensions are required"))
	}
	if err := CheckTokenizer(c.Embedding.Tokenizer); err != nil {
		errs = append(errs, err)
	}
	if len(c.Sources) == 0 {
		errs = append(errs, errors.New("no sources"))
	}
	errs = append(errs, c.Lexical.Validate("lexical")...)
	for i, s := range c.Sources {
		if s.Name == "" || (s.Path == "") == (s.Git == nil) {
			errs = append(errs, fmt.Errorf("sources[%d] needs a name and exactly one of path or git", i))
		}
		if s.Root != "" && !within(s.Root, s.Path) {
			errs = append(errs, fmt.Errorf("sources[%d].path %q is not inside its root %q", i, s.Path, s.Root))
		}
		if s.Git != nil && s.Git.Timeout < 0 {
			errs = append(errs, fmt.Errorf("sources[%d].git.timeout must not be negative", i))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid ingest config: %w", err)
	}
	return nil
}

// within reports whether slash-separated p is root or lies under it.
func within(root, p string) bool {
	root, p = path.Clean(root), path.Clean(p)
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}
