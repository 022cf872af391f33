// Package routeconfig is the contract between the operator and `ragroute
// serve`: the effective configuration of one route, rendered by the
// QueryRoute controller into a ConfigMap and read by the route runtime at
// start. It holds no secrets: a secret is named by the environment variable
// that carries it into the pod. It imports nothing from Kubernetes.
package routeconfig

// Version is the schema version of Config. A runtime refuses a file whose
// version it does not know instead of guessing.
const Version = 1

// FileName is the ConfigMap key and file name of the rendered config.
const FileName = "route.json"

// Config is everything one route needs to serve turns.
type Config struct {
	Version   int       `json:"version"`
	Route     Route     `json:"route"`
	Server    Server    `json:"server"`
	Prompt    Prompt    `json:"prompt"`
	Store     Store     `json:"store"`
	Model     ChatModel `json:"model"`
	WebSearch *Endpoint `json:"webSearch,omitempty"`
	Window    Window    `json:"window"`
	Retrieval Retrieval `json:"retrieval"`
	Rerank    Rerank    `json:"rerank"`
	Cache     Cache     `json:"cache"`
	Turns     Turns     `json:"turns"`
	Redis     *Redis    `json:"redis,omitempty"`
	Mode      string    `json:"mode"`
	Auth      Auth      `json:"auth"`
}

// Route names the QueryRoute this config was rendered from.
type Route struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// Server is where the query API listens.
type Server struct {
	Port int32 `json:"port"`
}

// Prompt is the platform layer of the route's prompt.
type Prompt struct {
	Name     string            `json:"name"`
	Platform string            `json:"platform"`
	NotFound string            `json:"notFound"`
	Styles   map[string]string `json:"styles,omitempty"`
	Hash     string            `json:"hash"`
}

// Store is the KnowledgeStore the route searches.
type Store struct {
	Name      string    `json:"name"`
	Milvus    Milvus    `json:"milvus"`
	Embedding Embedding `json:"embedding"`
	Search    Search    `json:"search"`
}

// Milvus says how to reach the store's collection alias.
type Milvus struct {
	URI                   string `json:"uri"`
	Database              string `json:"database"`
	Collection            string `json:"collection"`
	TokenEnv              string `json:"tokenEnv,omitempty"`
	TLSServerName         string `json:"tlsServerName,omitempty"`
	TLSInsecureSkipVerify bool   `json:"tlsInsecureSkipVerify,omitempty"`
}

// Embedding is the store's embedder.
type Embedding struct {
	BaseURL        string `json:"baseURL"`
	Model          string `json:"model"`
	Dimensions     int32  `json:"dimensions"`
	MaxInputTokens int32  `json:"maxInputTokens"`
	APIKeyEnv      string `json:"apiKeyEnv,omitempty"`
}

// Search tunes the hybrid search.
type Search struct {
	Primitives []string `json:"primitives"`
	Candidates int32    `json:"candidates"`
	RRFK       int32    `json:"rrfK"`
}

// ChatModel is the model that drives the turn.
type ChatModel struct {
	BaseURL      string  `json:"baseURL"`
	Name         string  `json:"name"`
	APIKeyEnv    string  `json:"apiKeyEnv,omitempty"`
	Temperature  float64 `json:"temperature"`
	MaxTokens    int32   `json:"maxTokens,omitempty"`
	SearchPolicy string  `json:"searchPolicy"`
}

// Endpoint is a plain HTTP endpoint with an optional API key.
type Endpoint struct {
	BaseURL   string `json:"baseURL"`
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
}

// Window is the context budget of one model call.
type Window struct {
	ContextTokens       int32 `json:"contextTokens"`
	AnswerReserveTokens int32 `json:"answerReserveTokens"`
}

// Retrieval filters candidates.
type Retrieval struct {
	SimilarityFloor float64 `json:"similarityFloor"`
	StrictFloor     float64 `json:"strictFloor"`
	MaxFragments    int32   `json:"maxFragments"`
}

// Rerank chooses the reranker.
type Rerank struct {
	Mode         string        `json:"mode"`
	CrossEncoder *CrossEncoder `json:"crossEncoder,omitempty"`
}

// CrossEncoder is a rerank endpoint.
type CrossEncoder struct {
	BaseURL   string `json:"baseURL"`
	Model     string `json:"model"`
	TopN      int32  `json:"topN"`
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
}

// Cache configures the exact cache. TTL is a Go duration string.
type Cache struct {
	Backend    string `json:"backend"`
	TTL        string `json:"ttl"`
	MaxEntries int32  `json:"maxEntries"`
}

// Turns configures the turn event log. Retention is a Go duration string.
type Turns struct {
	Backend   string `json:"backend"`
	Retention string `json:"retention"`
}

// Redis says how to reach the shared Redis.
type Redis struct {
	Address     string `json:"address"`
	DB          int32  `json:"db,omitempty"`
	PasswordEnv string `json:"passwordEnv,omitempty"`
}

// Auth establishes identities: exactly one of JWT or TrustedProxy.
type Auth struct {
	JWT          *JWT          `json:"jwt,omitempty"`
	TrustedProxy *TrustedProxy `json:"trustedProxy,omitempty"`
}

// JWT verifies bearer tokens.
type JWT struct {
	Issuer      string `json:"issuer"`
	Audience    string `json:"audience"`
	JWKSURL     string `json:"jwksURL"`
	UserClaim   string `json:"userClaim"`
	GroupsClaim string `json:"groupsClaim"`
}

// TrustedProxy reads identity headers.
type TrustedProxy struct {
	UserHeader   string `json:"userHeader"`
	GroupsHeader string `json:"groupsHeader"`
}

// Environment variables that carry secrets into route pods. The config names
// them; their values never appear in the config.
const (
	EnvModelAPIKey     = "RAGROUTE_MODEL_API_KEY"
	EnvEmbeddingAPIKey = "RAGROUTE_EMBEDDING_API_KEY"
	EnvMilvusToken     = "RAGROUTE_MILVUS_TOKEN"
	EnvWebSearchAPIKey = "RAGROUTE_WEBSEARCH_API_KEY"
	EnvRerankAPIKey    = "RAGROUTE_RERANK_API_KEY"
	EnvRedisPassword   = "RAGROUTE_REDIS_PASSWORD"
)
