package controller

import (
	"cmp"
	"path"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// Where the ingest Job sees its inputs.
const (
	sourcesMountPath = "/sources"
	secretsMountPath = "/secrets"
)

// hasIngestion reports whether the store declares sources to ingest.
func hasIngestion(store *v1alpha1.KnowledgeStore) bool {
	return store.Spec.Ingestion != nil && len(store.Spec.Ingestion.Sources) > 0
}

// renderIngestConfig is the pure rendering of the ingestion run's config:
// the same Milvus and embedder settings routes get, and each source as a
// folder the Job mounts.
func renderIngestConfig(store *v1alpha1.KnowledgeStore) podconfig.IngestConfig {
	spec := &store.Spec
	cfg := podconfig.IngestConfig{
		Version: podconfig.IngestVersion, Store: store.Name, Milvus: renderMilvus(store), Embedding: renderEmbedding(spec),
		Lexical: renderLexical(spec.Search),
		Chunking: podconfig.Chunking{
			MaxTokens: v1alpha1.DefaultChunkMaxTokens, OverlapTokens: v1alpha1.DefaultChunkOverlapTokens,
			MergeBelowTokens: v1alpha1.DefaultChunkMergeBelowTokens, FrontMatterKey: v1alpha1.DefaultFrontMatterKey,
		},
	}
	if a := spec.Access; a != nil {
		cfg.DefaultPrincipals = a.DefaultPrincipals
		cfg.Chunking.FrontMatterKey = cmp.Or(a.FrontMatterKey, cfg.Chunking.FrontMatterKey)
	}
	cfg.BatchSize, cfg.Concurrency = v1alpha1.DefaultEmbedBatchSize, v1alpha1.DefaultEmbedConcurrency
	if ing := spec.Ingestion; ing != nil {
		cfg.BatchSize = int(cmp.Or(ing.EmbedBatchSize, int32(cfg.BatchSize)))
		cfg.Concurrency = int(cmp.Or(ing.EmbedConcurrency, int32(cfg.Concurrency)))
		if c := ing.Chunking; c != nil {
			cfg.Chunking.MaxTokens = int(cmp.Or(c.MaxTokens, int32(cfg.Chunking.MaxTokens)))
			cfg.Chunking.OverlapTokens = int(c.OverlapTokens)
			cfg.Chunking.MergeBelowTokens = int(c.MergeBelowTokens)
		}
		for _, src := range ing.Sources {
			out := podconfig.Source{Name: src.Name, Principals: src.Principals}
			if g := src.Git; g != nil {
				out.Git = &podconfig.GitSource{URL: g.URL, Ref: cmp.Or(g.Ref, "main"), Path: g.Path,
					Timeout: durationOr(g.Timeout, podconfig.Duration(v1alpha1.DefaultGitTimeout))}
				if g.SecretRef != nil {
					out.Git.CredentialsDir = path.Join(secretsMountPath, src.Name)
				}
			} else {
				out.Root, out.Path = sourceMount(src), sourcePath(src)
			}
			cfg.Sources = append(cfg.Sources, out)
		}
	}
	return cfg
}

// sourceMount is where the Job mounts a source's ConfigMap or claim:
// the root nothing read from the source may leave.
func sourceMount(src v1alpha1.IngestionSource) string {
	return path.Join(sourcesMountPath, src.Name)
}

// sourcePath is where the Job sees a source's files.
func sourcePath(src v1alpha1.IngestionSource) string {
	p := sourceMount(src)
	if src.PVC != nil && src.PVC.Path != "" {
		p = path.Join(p, src.PVC.Path)
	}
	return p
}

func marshalIngestConfig(cfg podconfig.IngestConfig) ([]byte, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &referenceError{Reason: v1alpha1.ReasonRenderFailed, Message: err.Error()}
	}
	return podconfig.Marshal(cfg)
}
