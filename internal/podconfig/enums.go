package podconfig

// The enums below carry the values of their API fields unchanged, so a
// rendered config reads like the spec it came from.

// SearchPolicy says who decides to search.
type SearchPolicy string

const (
	// SearchModelDecides offers search_knowledge as a tool.
	SearchModelDecides SearchPolicy = "modelDecides"
	// SearchAlways searches before the model is called.
	SearchAlways SearchPolicy = "always"
)

// RerankMode chooses how candidates are reordered.
type RerankMode string

const (
	// RerankRRF keeps the fused RRF order.
	RerankRRF RerankMode = "rrf"
	// RerankCrossEncoder reorders the top candidates with a rerank endpoint.
	RerankCrossEncoder RerankMode = "crossEncoder"
)

// Backend is where the exact cache or the turn log lives.
type Backend string

const (
	// BackendMemory keeps state in the pod: one replica only.
	BackendMemory Backend = "memory"
	// BackendRedis shares state across replicas.
	BackendRedis Backend = "redis"
)

// Mode is how a turn runs.
type Mode string

const (
	// ModeSingleRound gives the model one round of tools.
	ModeSingleRound Mode = "singleRound"
	// ModeAgentic is the multi-round retriever harness.
	ModeAgentic Mode = "agentic"
)
