package podconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Milvus says how to reach a KnowledgeStore's collection alias.
type Milvus struct {
	// Owner is the KnowledgeStore (namespace/name) the collection belongs
	// to: recorded on the generations an ingestion creates, checked by
	// every read; empty in a local run (no check).
	Owner                 string `json:"owner,omitempty"`
	URI                   string `json:"uri"`
	Database              string `json:"database"`
	Collection            string `json:"collection"`
	TokenEnv              string `json:"tokenEnv,omitempty"`
	TLSServerName         string `json:"tlsServerName,omitempty"`
	TLSInsecureSkipVerify bool   `json:"tlsInsecureSkipVerify,omitempty"`
}

// Embedding is a KnowledgeStore's embedder.
type Embedding struct {
	BaseURL        string `json:"baseURL"`
	Model          string `json:"model"`
	Dimensions     int32  `json:"dimensions"`
	MaxInputTokens int32  `json:"maxInputTokens"`
	APIKeyEnv      string `json:"apiKeyEnv,omitempty"`
	// QueryPrefix goes in front of every question a route embeds.
	QueryPrefix string `json:"queryPrefix,omitempty"`
	// DocumentPrefix goes in front of every chunk text and title an
	// ingestion embeds.
	DocumentPrefix string `json:"documentPrefix,omitempty"`
	// Tokenizer counts chunk sizes and the embedder's input limit (empty:
	// TokenizerBERTUncased).
	Tokenizer Tokenizer `json:"tokenizer,omitempty"`
}

// Fingerprint identifies the embedder's vector space: a change of model,
// dimensions, endpoint or input prefixes means vectors that cannot be
// compared with the old ones, so a new generation; so does a change of
// tokenizer, which cuts every chunk anew. Without prefixes, and with the
// default tokenizer, it is what it was before either existed, so an
// upgrade re-embeds nothing.
func (e Embedding) Fingerprint() string {
	id := e.Model + "\x00" + strconv.Itoa(int(e.Dimensions)) + "\x00" + e.BaseURL
	if e.QueryPrefix != "" || e.DocumentPrefix != "" {
		// Quoted, so no prefix can pass for another split of the two.
		id += "\x00prefixes\x00" + strconv.Quote(e.QueryPrefix) + "\x00" + strconv.Quote(e.DocumentPrefix)
	}
	if e.Tokenizer != "" && e.Tokenizer != TokenizerBERTUncased {
		id += "\x00tokenizer\x00" + string(e.Tokenizer)
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// Environment variables that carry secrets into pods. The configs name them;
// their values never appear in a config.
const (
	EnvModelAPIKey     = "RAGROUTE_MODEL_API_KEY"
	EnvJudgeAPIKey     = "RAGROUTE_JUDGE_API_KEY"
	EnvEmbeddingAPIKey = "RAGROUTE_EMBEDDING_API_KEY"
	EnvMilvusToken     = "RAGROUTE_MILVUS_TOKEN"
	EnvWebSearchAPIKey = "RAGROUTE_WEBSEARCH_API_KEY"
	EnvRerankAPIKey    = "RAGROUTE_RERANK_API_KEY"
	EnvRedisPassword   = "RAGROUTE_REDIS_PASSWORD"
	EnvRedisCA         = "RAGROUTE_REDIS_CA"
	EnvRedisSealKey    = "RAGROUTE_REDIS_SEAL_KEY"
	EnvProxySecret     = "RAGROUTE_PROXY_SECRET"
)
