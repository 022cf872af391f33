package v1alpha1

import "time"

// Defaults for optional fields. The CRD schema sets the same values with
// +kubebuilder:default markers when a section is written; these apply when a
// whole section is left out. TestSchemaDefaultsMatchGo keeps the two equal.
const (
	DefaultMilvusDatabase    = "default"
	DefaultMaxInputTokens    = 512
	DefaultCandidates        = 12
	DefaultRRFK              = 60
	DefaultTemperature       = 0.2
	DefaultSimilarityFloor   = 0.2
	DefaultStrictFloor       = 0.35
	DefaultMaxFragments      = 6
	DefaultCrossEncoderTopN  = 12
	DefaultCacheTTL          = 10 * time.Minute
	DefaultCacheMaxEntries   = 10000
	DefaultTurnRetention     = 10 * time.Minute
	DefaultReplicas          = 1
	DefaultJWTUserClaim      = "sub"
	DefaultJWTGroupsClaim    = "groups"
	DefaultProxyUserHeader   = "X-Forwarded-User"
	DefaultProxyGroupsHeader = "X-Forwarded-Groups"
)

// AllSearchPrimitives are fused when a store names none.
var AllSearchPrimitives = []SearchPrimitive{PrimitiveTextDense, PrimitiveTextSparse, PrimitiveTitleDense, PrimitiveTitleSparse}

// Chunking and access defaults (KnowledgeStore.spec.ingestion, .access).
const (
	DefaultChunkMaxTokens        = 200
	DefaultChunkOverlapTokens    = 24
	DefaultChunkMergeBelowTokens = 60
	DefaultEmbedBatchSize        = 32
	DefaultEmbedConcurrency      = 2
	DefaultFrontMatterKey        = "acl"
)
