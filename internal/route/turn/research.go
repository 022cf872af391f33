package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/model"
)

// Bounded re-search: before a single-round turn answers "not found" (it
// found too little, or the answerability check refused what it packed),
// the model rephrases the question once (one short call, no tools) and the
// route searches that once more. A second miss is not found; there is
// never a third search. A route without a model has nothing to rephrase
// with, and a rephrase that repeats a query the round searched would
// find the same: neither searches again.

// researchTool names the rephrased search in its span and a failure.
const researchTool = "research"

const rephrasePrompt = "The documentation search for the user's question found nothing. Write one different search query for it: " +
	"other words, synonyms, the likely name of the feature or setting. Reply with the query only."

// mayReSearch says whether the round may search once more: the route
// allows it, has a model to rephrase with, and the round searched the
// documentation (only those searches are re-run).
func (t *turn) mayReSearch(ev evidence) bool {
	return t.engine.Search.Research && t.engine.Chat != nil && containsSearch(ev.calls)
}

// weak says whether what the round found calls for the one re-search:
// nothing packed, or a best fragment whose cosine similarity to the
// question is below ResearchBelow (a cosine in every rerank mode, as
// documented: a cross-encoder's relevance is another scale).
func (t *turn) weak(ev evidence) bool {
	s := t.engine.Search
	if len(ev.packing.Packed) == 0 {
		return true
	}
	if s.ResearchBelow == nil {
		return false
	}
	best := 0.0
	for _, f := range ev.packing.Packed {
		best = max(best, f.Similarity)
	}
	return best < *s.ResearchBelow
}

func containsSearch(calls []model.ToolCall) bool {
	for _, c := range calls {
		if c.Name == searchToolName {
			return true
		}
	}
	return false
}

// reSearch rephrases, searches once, and packs what both searches found;
// the new search joins the round as one more search_knowledge call. A
// rephrase the round already searched leaves the round as it was.
func (t *turn) reSearch(ctx context.Context, ev evidence) (evidence, error) {
	var queries []string
	for _, res := range ev.results {
		queries = append(queries, res.Query)
	}
	query, err := t.rephrase(ctx, queries)
	if err != nil {
		return evidence{}, err
	}
	if searched(queries, query) {
		t.emit(Research{Queries: queries, Rephrase: query})
		return ev, nil
	}
	res, err := t.search(ctx, researchTool, query)
	if err != nil {
		return evidence{}, err
	}
	t.emit(Research{Queries: queries, Rephrase: query, Found: len(res.Fragments)})
	arguments, _ := json.Marshal(map[string]string{"query": query})
	n := len(ev.results)
	ev.calls = append(ev.calls[:n:n], model.ToolCall{ID: "call_research", Name: searchToolName, Arguments: string(arguments)})
	ev.results = append(ev.results[:n:n], res)

	ev.packing, ev.verdict = t.pack(ctx, ev, nil), nil
	t.emitRetrievals(ev.results[n:], ev.packing)
	return ev, nil
}

// searched says whether query is one of queries, as the harness tells a
// repeated search (searchKey).
func searched(queries []string, query string) bool {
	for _, q := range queries {
		if searchKey(q) == searchKey(query) {
			return true
		}
	}
	return false
}

// rephrase is the model's one other query for the question; its own
// words when it has none.
func (t *turn) rephrase(ctx context.Context, tried []string) (string, error) {
	question := t.in.Question()
	return t.writeQuery(ctx, "rephrase", rephrasePrompt,
		fmt.Sprintf("Question: %s\nSearched without result: %s", question, strings.Join(tried, "; ")), question)
}
