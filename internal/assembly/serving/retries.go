package serving

import (
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// upstreamRetries reads the retry counts of the route's model clients:
// the grounding check's embedder client counts as the embedder.
func upstreamRetries(chat *model.Chat, searcher *retrieval.Searcher, check model.Embedder) map[string]func() int64 {
	retries := map[string]func() int64{}
	if chat != nil {
		retries["chat"] = chat.Retries
	}
	query, _ := searcher.Embedder.(model.RetryCounter)
	background, _ := check.(model.RetryCounter)
	if query != nil || background != nil {
		retries["embedder"] = func() int64 {
			var n int64
			for _, c := range []model.RetryCounter{query, background} {
				if c != nil {
					n += c.Retries()
				}
			}
			return n
		}
	}
	if counter, ok := searcher.Reranker.(model.RetryCounter); ok {
		retries["reranker"] = counter.Retries
	}
	return retries
}
