package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// Bounded re-search: before a single-round turn answers "not found", the
// model rephrases the question once (one short call, no tools) and the
// route searches that once more. A second miss is not found; there is
// never a third search. A route without a model has nothing to rephrase
// with, and a rephrase that repeats a query the round searched would
// find the same: neither searches again.

// researchTool names the rephrased search in its span and a failure.
const researchTool = "research"

const rephrasePrompt = "The documentation search for the user's question found nothing. Write one different search query for it: " +
	"other words, synonyms, the likely name of the feature or setting. Reply with the query only."

// weak says whether what the round found calls for the one re-search:
// nothing packed, or a best fragment whose cosine similarity to the
// question is below ResearchBelow (a cosine in every rerank mode, as
// documented: a cross-encoder's relevance is another scale). Only
// searches of the documentation are re-run.
func (r *Engine) weak(calls []model.ToolCall, packing Packing) bool {
	if !r.Research || r.Chat == nil || !containsSearch(calls) {
		return false
	}
	if len(packing.Packed) == 0 {
		return true
	}
	if r.ResearchBelow == nil {
		return false
	}
	best := 0.0
	for _, f := range packing.Packed {
		best = max(best, f.Similarity)
	}
	return best < *r.ResearchBelow
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
func (r *Engine) reSearch(ctx context.Context, in Input, intent retrieval.Intent, calls []model.ToolCall, results []retrieval.Retrieval,
	packing Packing, st *turnState) ([]model.ToolCall, []retrieval.Retrieval, Packing, error) {
	var queries []string
	for _, res := range results {
		queries = append(queries, res.Query)
	}
	query, err := r.rephrase(ctx, lastUserMessage(in.Messages), queries, st)
	if err != nil {
		return nil, nil, Packing{}, err
	}
	if searched(queries, query) {
		st.emit(Event{Type: EventResearch, Data: Research{Queries: queries, Rephrase: query}})
		return calls, results, packing, nil
	}
	res, err := r.search(ctx, st, researchTool, query, in.Principals)
	if err != nil {
		return nil, nil, Packing{}, err
	}
	st.emit(Event{Type: EventResearch, Data: Research{Queries: queries, Rephrase: query, Found: len(res.Fragments)}})
	arguments, _ := json.Marshal(map[string]string{"query": query})
	calls = append(calls[:len(results):len(results)], model.ToolCall{ID: "call_research", Name: searchToolName, Arguments: string(arguments)})
	results = append(results[:len(results):len(results)], res)

	packing = r.pack(ctx, in, st.prompt, intent, calls, results, nil)
	r.emitRetrievals(results[len(results)-1:], packing, st)
	return calls, results, packing, nil
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
func (r *Engine) rephrase(ctx context.Context, question string, tried []string, st *turnState) (string, error) {
	return r.writeQuery(ctx, "rephrase", rephrasePrompt,
		fmt.Sprintf("Question: %s\nSearched without result: %s", question, strings.Join(tried, "; ")), question, st)
}
