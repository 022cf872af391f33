package assembly

import (
	"context"
	"fmt"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/lexical"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// The clients of ragroute's pods are built here, once, for serve, ingest
// and the evaluations alike; the secrets they carry come through Secrets,
// and the internal packages get plain values.

// milvusDialTimeout bounds connecting to Milvus.
const milvusDialTimeout = 30 * time.Second

// ConnectMilvus dials the Milvus a config names; the caller closes it.
func ConnectMilvus(ctx context.Context, m podconfig.Milvus, secrets Secrets) (*milvusclient.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, milvusDialTimeout)
	defer cancel()
	client, err := knowledge.Connect(ctx, knowledge.Connection{
		URI: m.URI, Database: m.Database, Token: secrets.Get(m.TokenEnv),
		TLSServerName: m.TLSServerName, TLSInsecureSkipVerify: m.TLSInsecureSkipVerify,
	})
	if err != nil {
		return nil, fmt.Errorf("connect to Milvus: %w", err)
	}
	return client, nil
}

// OpenStore connects to the store behind a config's collection alias,
// preparing keyword-search text with lex's analyzer (the same for an
// ingestion run and the store's routes); the caller closes it with
// closeStore.
func OpenStore(ctx context.Context, m podconfig.Milvus, e podconfig.Embedding, lex podconfig.Lexical, secrets Secrets) (_ *knowledge.Store, closeStore func(), _ error) {
	analyzer, err := lexical.New(lex.LanguageNames())
	if err != nil {
		return nil, nil, fmt.Errorf("keyword search of %s: %w", m.Collection, err)
	}
	client, err := ConnectMilvus(ctx, m, secrets)
	if err != nil {
		return nil, nil, err
	}
	closeStore = func() { _ = client.Close(context.Background()) }
	return knowledge.NewStore(client, m.Collection, int(e.Dimensions)).WithOwner(m.Owner).WithAnalyzer(analyzer), closeStore, nil
}

// Time limits of one embedding request: a query is one short text; an
// ingestion batch is dozens of chunks, which a CPU-only embedder on a busy
// node can take minutes over.
const (
	QueryEmbedTimeout = time.Minute
	BatchEmbedTimeout = 10 * time.Minute
)

// newEmbedder is a store's embedder without input prefixes; timeout
// bounds one request. Serve and ingest use QueryEmbedder and
// DocumentEmbedder, which add the store's prefixes to it.
func newEmbedder(e podconfig.Embedding, secrets Secrets, timeout time.Duration) *model.Embeddings {
	_, tokens := tokenize.ForEmbedder(e.Tokenizer)
	return model.NewEmbeddings(model.EmbeddingsConfig{
		BaseURL: e.BaseURL, Model: e.Model, APIKey: secrets.Get(e.APIKeyEnv),
		Dimensions: int(e.Dimensions), MaxInputTokens: int(e.MaxInputTokens), Tokens: tokens, Timeout: timeout,
	})
}

// QueryEmbedder embeds questions as the store's model expects them:
// behind its query prefix, cut so that prefix and question fit its input.
func QueryEmbedder(e podconfig.Embedding, secrets Secrets, timeout time.Duration) knowledge.Embedder {
	return newPrefixedEmbedder(e, e.QueryPrefix, secrets, timeout)
}

// DocumentEmbedder embeds chunk texts and titles behind the store's
// document prefix, cut so that prefix and text fit the model's input.
func DocumentEmbedder(e podconfig.Embedding, secrets Secrets, timeout time.Duration) knowledge.Embedder {
	return newPrefixedEmbedder(e, e.DocumentPrefix, secrets, timeout)
}

// newPrefixedEmbedder puts prefix in front of every input. With a prefix
// the wrapper cuts each text to leave it room, so the client need not
// tokenize it a second time.
func newPrefixedEmbedder(e podconfig.Embedding, prefix string, secrets Secrets, timeout time.Duration) knowledge.Embedder {
	if prefix == "" {
		return newEmbedder(e, secrets, timeout)
	}
	limit := e.MaxInputTokens
	e.MaxInputTokens = 0
	_, tokens := tokenize.ForEmbedder(e.Tokenizer)
	return model.WithPrefix(newEmbedder(e, secrets, timeout), prefix, int(limit), tokens)
}

// Judge is the route's judge model (answer.judge), its key read from the
// variable the config names as spec.model's is. Every judge call asks for
// greedy sampling, which only lowers the configured temperature: 1 here
// so that the call's 0 is sent (a 0 configured would be left out of the
// request, and the server's default would apply).
func Judge(j podconfig.Judge, secrets Secrets) *model.Chat {
	return model.NewChat(model.ChatConfig{BaseURL: j.BaseURL, Model: j.Name, APIKey: secrets.Get(j.APIKeyEnv), Temperature: 1})
}

// Chat is the route's chat model.
func Chat(m podconfig.ChatModel, secrets Secrets) *model.Chat {
	return model.NewChat(model.ChatConfig{
		BaseURL: m.BaseURL, Model: m.Name, APIKey: secrets.Get(m.APIKeyEnv),
		Temperature: m.Temperature, MaxTokens: int(m.MaxTokens), IdleTimeout: m.IdleTimeout.Std(),
	})
}
