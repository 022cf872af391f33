package serving

import (
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// upstreamRetries reads the retry counts of the route's model clients:
// the chat model, the embedder client the questions and the grounding
// check share (the searcher's), and the reranker when the route has one.
func upstreamRetries(chat *model.Chat, searcher *retrieval.Searcher) map[string]func() int64 {
	retries := map[string]func() int64{}
	if chat != nil {
		retries["chat"] = chat.Retries
	}
	if counter, ok := searcher.Embedder.(model.RetryCounter); ok {
		retries["embedder"] = counter.Retries
	}
	if counter, ok := searcher.Reranker.(model.RetryCounter); ok {
		retries["reranker"] = counter.Retries
	}
	return retries
}
