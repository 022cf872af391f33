package serving

import (
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// upstreamRetries reads the retry counts of the route's model clients:
// the chat model, the embedder client the questions and the grounding
// check share, and the reranker when the route has one.
func upstreamRetries(chat *model.Chat, embedder *model.Shared, reranker retrieval.Reranker) map[string]func() int64 {
	retries := map[string]func() int64{"embedder": embedder.Retries}
	if chat != nil {
		retries["chat"] = chat.Retries
	}
	if counter, ok := reranker.(model.RetryCounter); ok {
		retries["reranker"] = counter.Retries
	}
	return retries
}
