package controller

import (
	"cmp"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// A store's Milvus and embedder reach two kinds of pods: the route's
// config (queryroute_render.go) and the ingestion run's
// (knowledgestore_render.go) render them here, one way, so both sides of
// the index read the same collection with the same model.

// renderMilvus is the store's Milvus connection as routes and ingestion
// runs both get it.
func renderMilvus(store *v1alpha1.KnowledgeStore) podconfig.Milvus {
	spec := &store.Spec
	out := podconfig.Milvus{
		Owner:      collectionOwner(store),
		URI:        spec.Milvus.URI,
		Database:   cmp.Or(spec.Milvus.Database, v1alpha1.DefaultMilvusDatabase),
		Collection: spec.Milvus.Collection,
		TokenEnv:   envFor(spec.Milvus.TokenSecretRef, podconfig.EnvMilvusToken),
	}
	if tls := spec.Milvus.TLS; tls != nil {
		out.TLSServerName, out.TLSInsecureSkipVerify = tls.ServerName, tls.InsecureSkipVerify
	}
	return out
}

// renderEmbedding is the store's embedder as routes and ingestion runs both
// get it: the same model on both sides of the index.
func renderEmbedding(spec *v1alpha1.KnowledgeStoreSpec) podconfig.Embedding {
	return podconfig.Embedding{
		BaseURL:        spec.Embedding.BaseURL,
		Model:          spec.Embedding.Model,
		Dimensions:     spec.Embedding.Dimensions,
		MaxInputTokens: cmp.Or(spec.Embedding.MaxInputTokens, v1alpha1.DefaultMaxInputTokens),
		APIKeyEnv:      envFor(spec.Embedding.APIKeySecretRef, podconfig.EnvEmbeddingAPIKey),
		QueryPrefix:    spec.Embedding.QueryPrefix,
		DocumentPrefix: spec.Embedding.DocumentPrefix,
		Tokenizer:      podconfig.Tokenizer(spec.Embedding.Tokenizer),
	}
}

// collectionOwner is the owner a store records on its collections: its
// namespace and name. Not its UID: a store deleted and created again (a
// GitOps re-sync) is the same tenant's and keeps its index.
func collectionOwner(store *v1alpha1.KnowledgeStore) string {
	return store.Namespace + "/" + store.Name
}
