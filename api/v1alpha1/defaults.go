package v1alpha1

import "time"

// Defaults for optional fields. The CRD schema sets the same values with
// +kubebuilder:default markers when a section is written; these apply when a
// whole section is left out. TestSchemaDefaultsMatchGo keeps the two equal.
// The raw retrieval floors have no schema default (a floor may be set in
// its relative form instead); RetrievalSettings' CEL rule repeats their
// values, and TestAPIServerRefusesBadYAML checks it against these. So does
// KnowledgeStoreSpec's rule with DefaultChunkMaxTokens (a chunking section
// left out still has its chunks compared with the embedder's input).
const (
	DefaultMilvusDatabase   = "default"
	DefaultMaxInputTokens   = 512
	DefaultCandidates       = 30
	DefaultRRFK             = 60
	DefaultTemperature      = 0.2
	DefaultSimilarityFloor  = 0.2
	DefaultStrictFloor      = 0.35
	DefaultMaxFragments     = 6
	DefaultMaxPerDocument   = 3
	DefaultDiversityMargin  = 0.05
	DefaultDominance        = 0.4
	DefaultCrossEncoderTopN = 12
	// DefaultCrossEncoderFirstStageWeight: on the dev set the local
	// ms-marco cross-encoder alone reorders the top 20 to nDCG@10 0.81; fused
	// with the first stage's order at weight 1, 0.86 (make eval).
	DefaultCrossEncoderFirstStageWeight = 1.0
	// DefaultCrossEncoderMaxDocumentTokens: how much of each fragment's
	// text the cross-encoder reads by default (0: all of it); make eval's
	// rows per length, docs/eval.md.
	DefaultCrossEncoderMaxDocumentTokens = 0
	// DefaultCrossEncoderStrictFloor is the strict floor on relevance with
	// rerank.mode crossEncoder and no retrieval.strictFloor.
	DefaultCrossEncoderStrictFloor = 0.01
	DefaultCacheTTL                = 10 * time.Minute
	DefaultCacheMaxEntries         = 10000
	DefaultTurnRetention           = 10 * time.Minute
	DefaultTurnMaxMemoryMiB        = 64
	DefaultReplicas                = 1
	DefaultMaxToolCalls            = 4
	DefaultModelIdleTimeout        = 60 * time.Second
	DefaultJWTUserClaim            = "sub"
	DefaultJWTGroupsClaim          = "groups"
	DefaultProxyUserHeader         = "X-Forwarded-User"
	DefaultProxyGroupsHeader       = "X-Forwarded-Groups"
	DefaultProxySecretHeader       = "X-Ragroute-Proxy-Secret"
)

// The grounding check (QueryRoute.spec.answer.grounding); the route
// runtime's own defaults (answer.Default*) are the same numbers,
// TestRuntimeDefaultsMatchTheAPI keeps them so (as every other default
// the runtime repeats).
const (
	DefaultGroundingThreshold = 0.55
	DefaultFallbackBelow      = 0.5
	// answer.answerability's thresholds.
	DefaultAnswerabilityMinCoverage    = 0.5
	DefaultAnswerabilityMinProbability = 0.5
)

// Turn limits (QueryRoute.spec.limits); the route runtime's own defaults
// (api.DefaultLimits) are the same numbers, TestRuntimeDefaultsMatchTheAPI
// keeps them so.
const (
	DefaultConcurrentTurnsPerUser = 4
	DefaultTurnsPerMinutePerUser  = 30
	DefaultMaxInFlightTurns       = 256
	DefaultMaxSearchesInFlight    = 8
)

// Search step deadlines (QueryRoute.spec.timeouts); the route runtime's
// own defaults (retrieval.Default*Timeout) are the same durations.
const (
	DefaultEmbedTimeout  = 10 * time.Second
	DefaultSearchTimeout = 5 * time.Second
	DefaultRerankTimeout = 10 * time.Second
)

// DefaultSearchWeights are the primitives' fusion weights when a store
// names none: the text vectors embed the title path already, so the title
// primitives only repeat them (and BM25 over headings matches their
// generic words): measured on two embedders, they cost ranking quality
// and two of four searches per turn. BM25 over text weighs half: it brings
// in exact names without outvoting the dense ranks.
var DefaultSearchWeights = map[SearchPrimitive]float64{
	PrimitiveTextDense: 1, PrimitiveTextSparse: 0.5, PrimitiveTitleDense: 0, PrimitiveTitleSparse: 0,
}

// DefaultLexicalLanguages are stemmed when a store's spec.search.lexical
// is left out (the schema's default is the same list): Russian, whose
// inflections keyword search misses without it; not English, whose
// stemming lowered the English sample route's nDCG@10 (docs/eval.md).
var DefaultLexicalLanguages = []LexicalLanguage{LanguageRussian}

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

// Ingestion deadlines (KnowledgeStore.spec.ingestion.timeout, and a git
// source's timeout); the ingestion's own clone default
// (sources.DefaultCloneTimeout) is the same duration.
const (
	DefaultIngestionTimeout = time.Hour
	DefaultGitTimeout       = 10 * time.Minute
)

// RouteEvaluation defaults (the schema's +kubebuilder:default markers say
// the same).
const (
	DefaultEvaluationTimeout             = 15 * time.Minute
	DefaultEvaluationMaxConcurrent       = 2
	DefaultEvaluationRegressionTolerance = 0.02
	DefaultEvaluationCalibrationAlpha    = 0.05
)
