package turn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/route/answer"
)

// extract streams the extractive answer to the question from what ev
// packed, a line at a time, then its citations. embedded, when it holds a
// vector for every unit of the packing (the grounding check's, for a
// replaced answer), spares embedding them again.
func (t *turn) extract(ctx context.Context, ev evidence, embedded [][]float32) (notFound bool, err error) {
	start := time.Now()
	defer func() { t.state.took("extract", time.Since(start)) }()
	check := t.engine.checker()
	quoter := answer.Quoter{Question: t.engine.Searcher.Embedder, Units: check.Units, Stored: check.Stored, Tokens: t.engine.Window.Tokens,
		Budget: t.answerBudget(), Language: t.prompt.Language}
	text, err := quoter.Quote(ctx, t.in.Question(), ev.intent, ev.packing.Packed, embedded)
	if err != nil {
		return false, &DependencyError{Dependency: DependencyGroundingCheck, Err: fmt.Errorf("extractive answer: %w", err)}
	}
	if text == "" {
		return t.notFound()
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			if err := t.delta(line); err != nil {
				return false, err
			}
		}
	}
	t.emitCitations(answer.Cited(text, ev.packing.Packed), false)
	return false, nil
}

// answerBudget is the tokens an extractive answer may take: the window's
// answer reserve, lowered as a model's answer is, by the route's
// model.maxTokens (AnswerSettings.MaxTokens) and the client's max_tokens.
func (t *turn) answerBudget() int {
	budget := t.engine.Window.AnswerReserve
	for _, limit := range []int{t.engine.Answer.MaxTokens, t.in.Generation.MaxTokens} {
		if limit > 0 && (budget <= 0 || limit < budget) {
			budget = limit
		}
	}
	return budget
}
