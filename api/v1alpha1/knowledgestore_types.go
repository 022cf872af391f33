package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KnowledgeStoreSpec describes a Milvus collection of Markdown chunks, the
// embedder that built it, how it is searched and how it is filled.
// +kubebuilder:validation:XValidation:rule="(has(self.ingestion) && has(self.ingestion.chunking) && has(self.ingestion.chunking.maxTokens) ? self.ingestion.chunking.maxTokens : 200) < (has(self.embedding.maxInputTokens) ? self.embedding.maxInputTokens : 512)",message="ingestion.chunking.maxTokens (200 when unset) must be less than embedding.maxInputTokens: a chunk's title path and the document prefix are embedded with it",fieldPath=".embedding.maxInputTokens",reason=FieldValueInvalid
type KnowledgeStoreSpec struct {
	// Milvus is where the chunks live.
	// +required
	Milvus MilvusConnection `json:"milvus"`

	// Embedding is the model that embeds chunks at ingestion and queries at
	// search time; both must use the same model.
	// +required
	Embedding EmbeddingModel `json:"embedding"`

	// Search tunes the hybrid search routes run against this store.
	// +optional
	Search *SearchSettings `json:"search,omitempty"`

	// Access maps documents to the principals allowed to see them.
	// +optional
	Access *AccessSettings `json:"access,omitempty"`

	// Ingestion declares the Markdown sources and how they are chunked.
	// +optional
	Ingestion *IngestionSettings `json:"ingestion,omitempty"`
}

// MilvusConnection says how to reach Milvus.
type MilvusConnection struct {
	// URI of the Milvus server, e.g. http://milvus.milvus.svc:19530.
	// http:// and tcp:// need a port (the Milvus client would dial none);
	// https:// without one is port 443. A token's allowed hosts are
	// checked against this host and port, which every component dials.
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^(https?|tcp)://[^\s]+$`
	URI string `json:"uri"`

	// Database within Milvus.
	// +optional
	// +kubebuilder:default=default
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Database string `json:"database,omitempty"`

	// Collection is the alias routes query; each index generation lives in
	// a collection named <collection>_g<N> behind it.
	// +required
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Collection string `json:"collection"`

	// TokenSecretRef selects the Milvus token ("user:password" or an API key).
	// +optional
	TokenSecretRef *SecretKeyRef `json:"tokenSecretRef,omitempty"`

	// TLS settings for https:// URIs.
	// +optional
	TLS *MilvusTLS `json:"tls,omitempty"`
}

// MilvusTLS configures TLS towards Milvus.
type MilvusTLS struct {
	// ServerName overrides the name checked in the server certificate.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServerName string `json:"serverName,omitempty"`

	// InsecureSkipVerify disables certificate checks. For tests only.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// EmbeddingModel is an OpenAI-compatible embeddings endpoint.
type EmbeddingModel struct {
	// BaseURL of the OpenAI-compatible API, e.g. http://embedder.models.svc/v1.
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	BaseURL string `json:"baseURL"`

	// Model name as the endpoint knows it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model"`

	// Dimensions of the vectors the model returns.
	// +required
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=32768
	Dimensions int32 `json:"dimensions"`

	// MaxInputTokens is the model's true input limit, its special tokens
	// included. Ingestion embeds each chunk as the document prefix, its
	// title path and its text, counted in the tokens of tokenizer (BERT
	// WordPiece with 10% of the limit kept free, by default); a chunk
	// over that is embedded cut (its stored text stays whole) and counted
	// in status.truncatedChunks. It must exceed
	// ingestion.chunking.maxTokens (200 when unset).
	// +optional
	// +kubebuilder:default=512
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=1048576
	MaxInputTokens int32 `json:"maxInputTokens,omitempty"`

	// APIKeySecretRef selects the endpoint's API key, if it needs one.
	// +optional
	APIKeySecretRef *SecretKeyRef `json:"apiKeySecretRef,omitempty"`

	// QueryPrefix is put, verbatim, in front of every question a route
	// embeds, for models trained with input prefixes: "query: " for e5,
	// "search_query: " for nomic-embed, "Represent this sentence for
	// searching relevant passages: " for bge. Mind the trailing space.
	// Changing it builds a new index generation.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	QueryPrefix string `json:"queryPrefix,omitempty"`

	// DocumentPrefix is put, verbatim, in front of every chunk text and
	// title an ingestion embeds: "passage: " for e5, "search_document: "
	// for nomic-embed; empty for bge and gte. Changing it builds a new
	// index generation.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DocumentPrefix string `json:"documentPrefix,omitempty"`

	// Tokenizer is the embedder's, in whose tokens chunk sizes
	// (ingestion.chunking) and maxInputTokens are counted: bertUncased
	// (all-MiniLM, bge-small, gte: the default, counted with 10% of the
	// input limit kept free) or xlmRoberta (multilingual-e5, bge-m3:
	// counted exactly, so a Russian page is cut into about as many chunks
	// as its English original, where BERT's English vocabulary cuts
	// Cyrillic into letters). Changing it builds a new index generation.
	// +optional
	// +kubebuilder:validation:Enum=bertUncased;xlmRoberta
	Tokenizer EmbeddingTokenizer `json:"tokenizer,omitempty"`
}

// EmbeddingTokenizer names an embedder's tokenizer.
type EmbeddingTokenizer string

// The tokenizers a store may name.
const (
	TokenizerBERTUncased EmbeddingTokenizer = "bertUncased"
	TokenizerXLMRoberta  EmbeddingTokenizer = "xlmRoberta"
)

// SearchPrimitive is one of the four searches fused by RRF.
// +kubebuilder:validation:Enum=textDense;textSparse;titleDense;titleSparse
type SearchPrimitive string

// The four search primitives: dense vectors and BM25, over text and titles.
const (
	PrimitiveTextDense   SearchPrimitive = "textDense"
	PrimitiveTextSparse  SearchPrimitive = "textSparse"
	PrimitiveTitleDense  SearchPrimitive = "titleDense"
	PrimitiveTitleSparse SearchPrimitive = "titleSparse"
)

// SearchSettings tunes the hybrid search.
type SearchSettings struct {
	// Primitives to fuse; all four when unset.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	Primitives []SearchPrimitive `json:"primitives,omitempty"`

	// Candidates is how many candidates each primitive returns and the
	// fusion keeps: the pool the diversity rule and floors choose from.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=200
	Candidates int32 `json:"candidates,omitempty"`

	// RRFK is the k constant of reciprocal rank fusion.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	RRFK int32 `json:"rrfK,omitempty"`

	// Weights scale each primitive's part in the fusion (weighted
	// reciprocal rank fusion): a strong embedder's dense ranks can lead
	// while BM25 still brings in exact names. `ragroute eval` prints the
	// weights that serve a store's questions best. A primitive left out
	// weighs as by default: textDense 1, textSparse 0.5, titleDense 0,
	// titleSparse 0 (the text vectors already embed the title path, so the
	// title primitives only repeat them). 0 leaves a primitive out of the
	// search.
	// +optional
	Weights *SearchWeights `json:"weights,omitempty"`

	// Lexical says how keyword (BM25) search prepares text.
	// +optional
	// +kubebuilder:default={}
	Lexical *LexicalSettings `json:"lexical,omitempty"`
}

// LexicalLanguage is a language whose words keyword search stems.
// +kubebuilder:validation:Enum=russian;english
type LexicalLanguage string

// The languages keyword search stems (Snowball stemmers).
const (
	LanguageRussian LexicalLanguage = "russian"
	LanguageEnglish LexicalLanguage = "english"
)

// LexicalSettings prepares the text of keyword (BM25) search, done by
// ragroute at ingestion and on every question alike, before Milvus sees
// either: Milvus Lite silently ignores a Milvus analyzer's filters, so
// stemming there would rank differently in tests than in a cluster.
type LexicalSettings struct {
	// Languages whose words are stemmed (Snowball) and whose stop words
	// are dropped, each word by its script: Cyrillic words by Russian,
	// Latin ones by English; every word is lower-cased, ё read as е, and
	// words with digits (v1, k8s) kept as they are. So «скидкой» finds a
	// page that says «скидка», "configure" one that says "configuring".
	// An empty list stems nothing: text is searched as Milvus's default
	// analyzer splits it. The default stems Russian only: stemming English
	// too lowered the English sample route's nDCG@10 by 0.015 on its dev
	// questions and changed nothing on the Russian ones (docs/eval.md).
	// Changing it builds a new index generation; until
	// it serves, the store's routes refuse searches (503
	// analyzer_mismatch).
	// +optional
	// +listType=set
	// +kubebuilder:default={russian}
	// +kubebuilder:validation:MaxItems=2
	Languages []LexicalLanguage `json:"languages"`
}

// SearchWeights are the fusion weights of the four primitives.
// +kubebuilder:validation:XValidation:rule="(has(self.textDense) ? self.textDense : 1.0) + (has(self.textSparse) ? self.textSparse : 0.5) + (has(self.titleDense) ? self.titleDense : 0.0) + (has(self.titleSparse) ? self.titleSparse : 0.0) > 0.0",message="weights must leave at least one primitive above 0",reason=FieldValueInvalid
type SearchWeights struct {
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	TextDense *float64 `json:"textDense,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	TextSparse *float64 `json:"textSparse,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	TitleDense *float64 `json:"titleDense,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	TitleSparse *float64 `json:"titleSparse,omitempty"`
}

// AccessSettings maps documents to principals (user:…, group:…, public).
type AccessSettings struct {
	// DefaultPrincipals may see documents that name no principals of their
	// own (in front matter or on their source). Unset means nobody may.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(public|(user|group):[^\s\p{Z}\p{Cc}\p{Cf},\x{FFFD}]+)$`
	DefaultPrincipals []string `json:"defaultPrincipals,omitempty"`

	// FrontMatterKey is the front-matter field listing a document's principals.
	// +optional
	// +kubebuilder:default=acl
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*$`
	FrontMatterKey string `json:"frontMatterKey,omitempty"`
}

// IngestionSettings declares what is ingested, when and how it is chunked.
type IngestionSettings struct {
	// Schedule re-ingests on a cron schedule, e.g. "0 */6 * * *".
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule,omitempty"`

	// Chunking thresholds, in tokens of the embedder.
	// +optional
	Chunking *ChunkingSettings `json:"chunking,omitempty"`

	// EmbedBatchSize is how many chunks one embedding request carries (each
	// chunk sends two texts: its text and its title path).
	// +optional
	// +kubebuilder:default=32
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	EmbedBatchSize int32 `json:"embedBatchSize,omitempty"`

	// EmbedConcurrency is how many embedding requests an ingestion run keeps
	// in flight, so the embedder is never idle while Milvus writes.
	// +optional
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	EmbedConcurrency int32 `json:"embedConcurrency,omitempty"`

	// Timeout bounds one ingestion run (the Job's activeDeadlineSeconds,
	// every scheduled run too): a run past it is stopped and the store shows
	// Indexed=False, reason IngestionTimedOut, so a stalled run never blocks
	// the next scheduled one for ever. Between 1m and 24h.
	// +optional
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('24h')",message="ingestion.timeout must be between 1m and 24h",reason=FieldValueInvalid
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Sources of Markdown documents.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Sources []IngestionSource `json:"sources,omitempty"`
}

// ChunkingSettings sets the chunker's thresholds.
// +kubebuilder:validation:XValidation:rule="!has(self.overlapTokens) || !has(self.maxTokens) || self.overlapTokens < self.maxTokens",message="overlapTokens must be less than maxTokens",fieldPath=".overlapTokens",reason=FieldValueInvalid
type ChunkingSettings struct {
	// MaxTokens is the largest chunk; larger sections are split into parts.
	// +optional
	// +kubebuilder:default=200
	// +kubebuilder:validation:Minimum=32
	// +kubebuilder:validation:Maximum=1048576
	MaxTokens int32 `json:"maxTokens,omitempty"`

	// OverlapTokens repeat between consecutive parts of a split section.
	// +optional
	// +kubebuilder:default=24
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4096
	OverlapTokens int32 `json:"overlapTokens,omitempty"`

	// MergeBelowTokens merges a subsection this short into its parent.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4096
	MergeBelowTokens int32 `json:"mergeBelowTokens,omitempty"`
}

// IngestionSource is one place Markdown is read from: exactly one of
// configMap, pvc or git.
// +kubebuilder:validation:XValidation:rule="[has(self.configMap), has(self.pvc), has(self.git)].filter(x, x).size() == 1",message="exactly one of configMap, pvc or git must be set",reason=FieldValueInvalid
type IngestionSource struct {
	// Name identifies the source within the store.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// ConfigMap whose keys are Markdown files.
	// +optional
	ConfigMap *LocalObjectRef `json:"configMap,omitempty"`

	// PVC path holding Markdown files.
	// +optional
	PVC *PVCSource `json:"pvc,omitempty"`

	// Git repository holding Markdown files.
	// +optional
	Git *GitSource `json:"git,omitempty"`

	// Principals may see this source's documents unless a document's front
	// matter says otherwise.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(public|(user|group):[^\s\p{Z}\p{Cc}\p{Cf},\x{FFFD}]+)$`
	Principals []string `json:"principals,omitempty"`
}

// PVCSource is a folder on a PersistentVolumeClaim.
type PVCSource struct {
	// ClaimName of the PersistentVolumeClaim.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClaimName string `json:"claimName"`

	// Path within the volume.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.contains('..')",message="path must not contain '..'",reason=FieldValueForbidden
	Path string `json:"path,omitempty"`
}

// GitSource is a folder in a Git repository.
type GitSource struct {
	// URL of the repository (https:// or ssh://), without credentials: an
	// https URL with a user or token in it (https://user:token@host/...),
	// or an ssh URL with a password, is refused; name a Secret in secretRef
	// (an ssh user, ssh://git@host/..., is fine).
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(https?|ssh)://[^\s]+$`
	// +kubebuilder:validation:XValidation:rule="!self.matches('^https?://[^/?#]*@') && !self.matches('^ssh://[^/?#@]*:[^/?#@]*@')",message="git.url must not carry credentials (user:token@host): put them in the Secret named by git.secretRef",reason=FieldValueForbidden
	URL string `json:"url"`

	// Ref is the branch, tag or commit to read.
	// +optional
	// +kubebuilder:default=main
	// +kubebuilder:validation:MaxLength=255
	Ref string `json:"ref,omitempty"`

	// Path within the repository.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.contains('..')",message="path must not contain '..'",reason=FieldValueForbidden
	Path string `json:"path,omitempty"`

	// SecretRef names a Secret with "username"/"password" or "ssh-privatekey".
	// +optional
	SecretRef *LocalObjectRef `json:"secretRef,omitempty"`

	// Timeout bounds the clone (connecting, fetching, checking out): a git
	// host that stalls fails the run with an error that names it. Between
	// 10s and 1h.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s') && duration(self) <= duration('1h')",message="git.timeout must be between 10s and 1h",reason=FieldValueInvalid
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// KnowledgeStoreStatus is what the operator observed of a KnowledgeStore.
type KnowledgeStoreStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Connected, SchemaReady, Indexed, Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ServerVersion Milvus reported at the last successful connection.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ServerVersion string `json:"serverVersion,omitempty"`

	// LastConnectedTime is when the store last became Connected (written on
	// the transition, not on every check, so rechecks cost no write).
	// +optional
	LastConnectedTime *metav1.Time `json:"lastConnectedTime,omitempty"`

	// EmbedderFingerprint identifies the embedder (model, dimensions, base
	// URL, input prefixes) the generation the alias serves was built with;
	// an ingestion whose spec.embedding has another builds a new
	// generation.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	EmbedderFingerprint string `json:"embedderFingerprint,omitempty"`

	// IndexAnalyzer names the keyword analyzer that built the keyword index
	// of the generation the alias serves, e.g. "snowball:russian+english/v1"
	// (spec.search.lexical.languages; "none" for none). While it differs
	// from the spec's, the store's QueryRoutes search nothing: their pods
	// answer 503 analyzer_mismatch and their Ready condition is False with
	// reason AnalyzerMismatch. Absent for a generation built before
	// ragroute analyzed text (not blocked; the next ingestion rebuilds it).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	IndexAnalyzer string `json:"indexAnalyzer,omitempty"`

	// IndexGroundingUnits names the splitter whose units (sentences, list
	// items, code blocks) the chunks of the generation the alias serves
	// hold the vectors of, e.g. "v1", as its ingestion recorded it: the
	// store's QueryRoutes' grounding check reads them and embeds only the
	// answer's sentences. Absent for a generation whose chunks hold none
	// (built before ingestions stored them, or by a run without a unit
	// embedder): routes are not blocked, their check embeds each new
	// fragment's units at query time (slower first questions, more
	// embedder load), and their GroundingUnits condition is False with
	// reason EmbeddedPerTurn; the next ingestion builds a generation with
	// them.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	IndexGroundingUnits string `json:"indexGroundingUnits,omitempty"`

	// IndexEmbedder names the embedder the generation the alias serves was
	// built with, as its ingestion recorded it on the collection. While its
	// model, dimensions or prefixes differ from spec.embedding's (after an
	// embedder change, until an ingestion with the new one succeeds), the
	// QueryRoutes of this store search nothing: their pods answer 503
	// embedder_mismatch and their Ready condition is False with reason
	// EmbedderMismatch. The base URL is not compared: the same model at
	// another address embeds alike. Absent for a generation built before
	// ingestions recorded it (routes are not blocked on it; the next
	// ingestion with the same embedder records it).
	// +optional
	IndexEmbedder *IndexEmbedder `json:"indexEmbedder,omitempty"`

	// IndexGeneration counts completed index builds; routes key their cache
	// on it.
	// +optional
	IndexGeneration int64 `json:"indexGeneration,omitempty"`

	// Rows in the collection the alias points at.
	// +optional
	Rows int64 `json:"rows,omitempty"`

	// LastIngestion records the most recent ingestion run.
	// +optional
	LastIngestion *IngestionRecord `json:"lastIngestion,omitempty"`

	// Background is the embedder's background similarity on the generation
	// the alias serves, as the last ingestion measured it: how similar
	// questions and chunks of unrelated documents score. Routes with
	// relative floors (retrieval.similarityFloorSigmas, strictFloorSigmas)
	// set them this many standard deviations above its mean.
	// +optional
	Background *BackgroundSimilarity `json:"background,omitempty"`

	// FlaggedChunks counts the chunks of the generation the alias serves
	// whose text reads as instructions to a model (an instruction override,
	// a persona or chat-template prompt, tool-call syntax, hidden text), as
	// the last ingestion counted them. Routes keep, drop or quarantine them
	// (retrieval.flaggedFragments); `ragroute chunk` shows which and why.
	// +optional
	FlaggedChunks *int64 `json:"flaggedChunks,omitempty"`

	// TruncatedChunks counts the chunks of the generation the alias serves
	// whose embedded input (document prefix, title path and text, or the
	// title path alone) was over embedding.maxInputTokens less its 10%
	// margin, as the last ingestion counted them: their vectors embed
	// only the part that fit, their stored text is whole. Above 0 the
	// Indexed condition says so and a Warning event is emitted; a smaller
	// ingestion.chunking.maxTokens or shorter headings bring it to 0.
	// +optional
	TruncatedChunks *int64 `json:"truncatedChunks,omitempty"`

	// RefusedDocuments counts the documents of the sources the last
	// ingestion refused and did not ingest (a link out of its source or to
	// nothing, a file over 8 MiB, more chunks than a document may have, a
	// row the schema would refuse); the rest was ingested and removed
	// documents deleted. Above 0 the Indexed condition says so and the
	// ingest Job's log names each document and why (docs/ingestion.md).
	// +optional
	RefusedDocuments *int64 `json:"refusedDocuments,omitempty"`
}

// IndexEmbedder is the embedder an index generation was built with.
type IndexEmbedder struct {
	// Model name as the embedding endpoint knows it.
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model"`

	// Dimensions of its vectors.
	Dimensions int32 `json:"dimensions"`

	// QueryPrefix put in front of every question.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	QueryPrefix string `json:"queryPrefix,omitempty"`

	// DocumentPrefix put in front of every chunk text and title.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DocumentPrefix string `json:"documentPrefix,omitempty"`
}

// BackgroundSimilarity sums up the cosine similarities between
// question-like texts (chunk titles) and chunks of other documents.
type BackgroundSimilarity struct {
	// Mean of the sampled similarities.
	Mean float64 `json:"mean"`

	// StdDev is their standard deviation.
	StdDev float64 `json:"stdDev"`

	// P50 is their median.
	P50 float64 `json:"p50"`

	// P90 is their 90th percentile.
	P90 float64 `json:"p90"`

	// P99 is their 99th percentile.
	P99 float64 `json:"p99"`

	// Samples is how many (question, chunk) pairs were measured.
	Samples int64 `json:"samples"`
}

// IngestionRecord describes one ingestion run.
type IngestionRecord struct {
	// Time the run finished.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`

	// Result of the run.
	// +optional
	// +kubebuilder:validation:Enum=Succeeded;Failed;Running
	Result string `json:"result,omitempty"`

	// Message gives details, e.g. the failure.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Message string `json:"message,omitempty"`
}

// KnowledgeStore is a Milvus-backed collection of an organisation's Markdown
// knowledge, with its embedder, search settings, ACL mapping and ingestion.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ks,categories=ragroute
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Rows",type=integer,JSONPath=`.status.rows`
// +kubebuilder:printcolumn:name="Flagged",type=integer,JSONPath=`.status.flaggedChunks`,priority=1
// +kubebuilder:printcolumn:name="Truncated",type=integer,JSONPath=`.status.truncatedChunks`,priority=1
// +kubebuilder:printcolumn:name="Generation",type=integer,JSONPath=`.status.indexGeneration`
// +kubebuilder:printcolumn:name="Last-Ingest",type=date,JSONPath=`.status.lastIngestion.time`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KnowledgeStore struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec KnowledgeStoreSpec `json:"spec"`
	// +optional
	Status KnowledgeStoreStatus `json:"status,omitempty"`
}

// KnowledgeStoreList is a list of KnowledgeStores.
// +kubebuilder:object:root=true
type KnowledgeStoreList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KnowledgeStore `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KnowledgeStore{}, &KnowledgeStoreList{})
}
