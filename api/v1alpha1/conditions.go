package v1alpha1

// Condition types. Ready is the summary every kind reports; the others say
// which part of the effective configuration is (not) in place.
const (
	// ConditionReady is True when the object can be used by what depends on it.
	ConditionReady = "Ready"

	// ConditionConnected (KnowledgeStore) is True when Milvus answered.
	ConditionConnected = "Connected"
	// ConditionSchemaReady (KnowledgeStore) is True when the collection exists
	// with the expected schema and indexes. Set by the KnowledgeStore
	// reconciler when the store declares ingestion sources.
	ConditionSchemaReady = "SchemaReady"
	// ConditionIndexed (KnowledgeStore) is True when the last ingestion built
	// a complete generation and the alias points at it. Set by the
	// KnowledgeStore reconciler when the store declares ingestion sources.
	ConditionIndexed = "Indexed"

	// ConditionProgressing (QueryRoute) is True while the Deployment rolls out.
	ConditionProgressing = "Progressing"
	// ConditionDegraded (QueryRoute) is True when the route cannot serve its
	// effective configuration; the reason names the broken part.
	ConditionDegraded = "Degraded"

	// ConditionInsecureAuth is True while a QueryRoute trusts identity
	// headers from any caller (trustedProxy.insecureAllowAnyCaller).
	ConditionInsecureAuth = "InsecureAuth"

	// ConditionGroundingUnits (QueryRoute) is True while the generation its
	// KnowledgeStore serves holds its chunks' units' vectors (the store's
	// status.indexGroundingUnits), so the grounding check embeds only the
	// answer's sentences; False while the check embeds each new fragment's
	// units at query time; Unknown while the store reports no serving
	// generation. Informational: it never affects Ready.
	ConditionGroundingUnits = "GroundingUnits"

	// ConditionReconciling is True while the operator works toward the
	// spec (a rollout, an ingestion, a retry); ConditionStalled is True
	// when it cannot get there without a change (a missing reference, a
	// failed ingestion). Both are kstatus' conventions, read by Flux and
	// `kubectl wait`; every kind sets them from its own conditions.
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"

	// ConditionPassing (RouteEvaluation) is True when the last finished
	// run met every threshold and no figure regressed.
	ConditionPassing = "Passing"
)

// Condition reasons, shared across kinds so tools can match on them.
const (
	ReasonAvailable         = "Available"
	ReasonValid             = "Valid"
	ReasonConnected         = "Connected"
	ReasonMilvusUnreachable = "MilvusUnreachable"
	ReasonSecretNotFound    = "SecretNotFound"
	ReasonSecretKeyNotFound = "SecretKeyNotFound"
	ReasonSecretNotLabeled  = "SecretNotLabeled"
	// ReasonSecretNotAllowedForHost: a Secret's ragroute.io/allowed-hosts
	// annotation does not list the host a reference would send it to.
	ReasonSecretNotAllowedForHost = "SecretNotAllowedForHost"
	ReasonConfigMapNotFound       = "ConfigMapNotFound"
	ReasonConfigMapKeyNotFound    = "ConfigMapKeyNotFound"
	ReasonKnowledgeStoreMissing   = "KnowledgeStoreNotFound"
	ReasonKnowledgeStoreNotReady  = "KnowledgeStoreNotReady"
	ReasonPlatformPromptMissing   = "PlatformPromptNotFound"
	ReasonPlatformPromptNotReady  = "PlatformPromptNotReady"
	ReasonRenderFailed            = "RenderFailed"
	ReasonApplyFailed             = "ApplyFailed"
	ReasonRollingOut              = "RollingOut"
	ReasonRolledOut               = "RolledOut"
	ReasonNoReadyReplicas         = "NoReadyReplicas"
	ReasonScaledToZero            = "ScaledToZero"
	ReasonReferencesResolved      = "ReferencesResolved"
	ReasonIngestionPending        = "IngestionPending"
	ReasonIngestionRunning        = "IngestionRunning"
	ReasonIngestionFailed         = "IngestionFailed"
	// ReasonIngestionTimedOut: the ingestion Job ran past
	// spec.ingestion.timeout and Kubernetes stopped it.
	ReasonIngestionTimedOut = "IngestionTimedOut"
	ReasonIndexed           = "Indexed"
	ReasonNoIndex           = "NoIndex"
	ReasonSchemaReady       = "SchemaReady"
	ReasonSchemaMismatch    = "SchemaMismatch"
	// ReasonCollectionOwnedByAnotherStore: the collection's generations
	// record another KnowledgeStore as their owner.
	ReasonCollectionOwnedByAnotherStore = "CollectionOwnedByAnotherStore"
	ReasonNoIngestion                   = "NoIngestion"
	ReasonInvalidPrompt                 = "InvalidPrompt"
	ReasonChildConflict                 = "ChildConflict"
	ReasonAnyCallerAllowed              = "AnyCallerAllowed"
	ReasonCallerAuthenticated           = "CallerAuthenticated"

	// ReasonInsecureProxyAuthNotAllowed: a QueryRoute asks for
	// trustedProxy.insecureAllowAnyCaller and the operator runs without
	// --allow-insecure-proxy-auth; its children are not applied.
	ReasonInsecureProxyAuthNotAllowed = "InsecureProxyAuthNotAllowed"

	// ReasonEmbedderMismatch: the generation the KnowledgeStore's alias
	// serves was built by another embedder (model, dimensions or input
	// prefixes) than the store's spec names (the embedder the QueryRoute's
	// pods embed questions with); the
	// route's pods refuse searches (503 embedder_mismatch) until an
	// ingestion with that embedder swaps in a new generation.
	ReasonEmbedderMismatch = "EmbedderMismatch"

	// ReasonAnalyzerMismatch: the generation the KnowledgeStore's alias
	// serves was built by another keyword analyzer than the store's
	// spec.search.lexical.languages name (the analyzer the QueryRoute's
	// pods prepare questions with); the route's pods refuse searches (503
	// analyzer_mismatch) until an ingestion with it swaps in a new
	// generation.
	ReasonAnalyzerMismatch = "AnalyzerMismatch"

	// GroundingUnits reasons. ReasonUnitsStored: the store's serving
	// generation holds its chunks' units' vectors, and the route's pods
	// read them; ReasonUnitsEmbeddedPerTurn: it holds none (or units of
	// another splitter), and the route's grounding check embeds each new
	// fragment's units at query time until an ingestion builds a
	// generation with them.
	ReasonUnitsStored          = "Stored"
	ReasonUnitsEmbeddedPerTurn = "EmbeddedPerTurn"

	// ReasonImageNotAllowed: a QueryRoute's spec.image is outside the
	// operator's --allowed-image-prefixes; its children are not applied.
	ReasonImageNotAllowed = "ImageNotAllowed"

	// RouteEvaluation reasons. ReasonQueryRouteMissing: the routeRef names
	// no QueryRoute; ReasonQueryRouteNotReady: it does not serve yet (no
	// config hash or endpoint); ReasonIdentityNotSupported: the identity
	// does not fit the route's auth (proxy headers for a JWT route).
	ReasonQueryRouteMissing    = "QueryRouteNotFound"
	ReasonQueryRouteNotReady   = "QueryRouteNotReady"
	ReasonIdentityNotSupported = "IdentityNotSupported"
	ReasonInvalidSchedule      = "InvalidSchedule"
	ReasonEvaluationPending    = "EvaluationPending"
	ReasonEvaluationRunning    = "EvaluationRunning"
	ReasonEvaluationFailed     = "EvaluationFailed"
	ReasonThresholdsMet        = "ThresholdsMet"
	ReasonBelowThreshold       = "BelowThreshold"
	ReasonRegressed            = "Regressed"
)
