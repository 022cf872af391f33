package turn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// extract streams the extractive answer to the question from packing, a
// line at a time, then its citations. embedded, when it holds a vector
// for every unit of packing (the grounding check's, for a replaced
// answer), spares embedding them again.
func (r *Engine) extract(ctx context.Context, question string, intent retrieval.Intent, packing Packing, embedded [][]float32,
	st *turnState) (notFound bool, err error) {
	start := time.Now()
	defer func() { st.took("extract", time.Since(start)) }()
	check := r.checker()
	quoter := answer.Quoter{Question: r.Searcher.Embedder, Units: check.Units, Stored: check.Stored, Tokens: r.Tokens,
		Budget: r.answerBudget(st.gen), Language: st.prompt.Language}
	text, err := quoter.Quote(ctx, question, intent, packing.Packed, embedded)
	if err != nil {
		return false, &DependencyError{Dependency: DependencyGroundingCheck, Err: fmt.Errorf("extractive answer: %w", err)}
	}
	if text == "" {
		return st.notFound()
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			if err := st.delta(line); err != nil {
				return false, err
			}
		}
	}
	emitCitations(answer.Cited(text, packing.Packed), false, st)
	return false, nil
}

// answerBudget is the tokens an extractive answer may take: the window's
// answer reserve, lowered as a model's answer is, by the route's
// model.maxTokens (AnswerMaxTokens) and the client's max_tokens.
func (r *Engine) answerBudget(client model.Generation) int {
	budget := r.AnswerReserve
	for _, limit := range []int{r.AnswerMaxTokens, client.MaxTokens} {
		if limit > 0 && (budget <= 0 || limit < budget) {
			budget = limit
		}
	}
	return budget
}
