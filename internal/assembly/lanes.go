package assembly

import (
	"context"
	"errors"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// A searcher and the turns over it share one embedder client, as in a
// pod: NewSearcher builds it (replicaEmbedder) and keeps it beside the
// searcher's question lane, and NewEngine's grounding check embeds on its
// Finishing lane. So a caller that leaves Parts.Embedder out, or brings
// its own client, gets one client per searcher and never a second,
// unshared one for the check.

// questionLane is the embedder of a searcher the assembly built: the
// Starting lane of the replica's client, which admits turns
// (model.Admitter, as the search reads it) and embeds their questions,
// and the client itself, for the check and the retry counts.
type questionLane struct {
	starting model.Embedder
	client   *model.Shared
}

func newQuestionLane(client *model.Shared) questionLane {
	return questionLane{starting: client.Lane(model.Starting), client: client}
}

// Embed embeds the questions of the turns let in, ahead of every check.
func (q questionLane) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return q.starting.Embed(ctx, texts)
}

// Admit waits until a new turn may start (model.Admitter).
func (q questionLane) Admit(ctx context.Context) error {
	return q.starting.(model.Admitter).Admit(ctx)
}

// Retries is the client's count of retried calls (model.RetryCounter):
// the questions' and the check's, one client.
func (q questionLane) Retries() int64 { return q.client.Retries() }

// errForeignSearcher refuses a turn over a searcher whose embedder is not
// a questionLane: its check could not share the questions' client.
var errForeignSearcher = errors.New("the searcher's embedder is not the assembly's shared client: build the searcher with NewSearcher")

// sharedCheck is the grounding check of the turns over searcher, on the
// Finishing lane of the client searcher embeds its questions with.
func sharedCheck(cfg podconfig.RouteConfig, searcher *retrieval.Searcher, p Parts) (answer.Checker, error) {
	questions, ok := searcher.Embedder.(questionLane)
	if !ok {
		return answer.Checker{}, errForeignSearcher
	}
	return newChecker(cfg, questions.client.Lane(model.Finishing), p.Vectors, p.Index), nil
}
