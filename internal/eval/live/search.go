package live

import (
	"context"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// searchAnswer is what the route's POST /v1/search answers (route/api's
// searchAnswer): the fragments with their texts, which the scorer reads.
type searchAnswer struct {
	Fragments []searchFragment `json:"fragments"`
}

type searchFragment struct {
	retrieval.Fragment
	Text string `json:"text"`
}

// search asks the route's search for query: the fragments as the scorer
// sees them (an empty list is the route's not-found), and the fragments
// themselves, texts filled in.
func (c *routeClient) search(ctx context.Context, query string) (eval.Outcome, []retrieval.Fragment, error) {
	var answer searchAnswer
	elapsed, err := c.postJSON(ctx, "/v1/search", map[string]string{"query": query}, &answer)
	if err != nil {
		return eval.Outcome{}, nil, err
	}
	o := eval.Outcome{NotFound: len(answer.Fragments) == 0, Elapsed: elapsed}
	fragments := make([]retrieval.Fragment, 0, len(answer.Fragments))
	for _, f := range answer.Fragments {
		f.Fragment.Text = f.Text
		fragments = append(fragments, f.Fragment)
		o.Units = append(o.Units, eval.Unit{Source: f.Source, Text: f.Text, HeadingPath: f.HeadingPath})
	}
	return o, fragments, nil
}
