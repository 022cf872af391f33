package turn

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// playRound is one round: model calls, each answered by the harness,
// until a save or a finalize is accepted or the round runs out of steps.
func (rs *researcher) playRound(ctx context.Context) ([]retrieval.Fragment, roundEnd, error) {
	h := rs.h
	messages := rs.roundWindow()
	rs.shareRound(messages)
	if h.round == 1 && rs.engine.Search.Policy == podconfig.SearchAlways {
		var err error
		if messages, err = rs.searchQuestionAndParts(ctx, messages); err != nil {
			return nil, roundGoesOn, err
		}
	}
	system := func(json bool) string { return harnessPrompt(rs.engine.Prompt, h, json) }
	maxCalls := rs.engine.Search.maxToolCalls()
	for range agenticMaxStepsPerRound {
		step, err := rs.ask(ctx, messages)
		if err != nil {
			return nil, roundGoesOn, err
		}
		if len(step.calls) == 0 {
			var again bool
			if messages, again = h.protocol.retry(messages, step, system); again {
				continue
			}
			return rs.forceFinalize("the model answered without finalizing"), roundFinalized, nil
		}
		messages = append(messages, step.assistant())
		end, final := roundGoesOn, []retrieval.Fragment(nil)
		for i, call := range step.calls {
			var result string
			switch {
			case i >= maxCalls:
				result = notRunResult(maxCalls)
			case end != roundGoesOn:
				result = "Not run: the previous call ended the round."
			default:
				result, end, final, err = rs.answerCall(ctx, call, messages)
				if err != nil {
					return nil, roundGoesOn, err
				}
			}
			messages = append(messages, step.result(call, result))
		}
		if end != roundGoesOn {
			return final, end, nil
		}
		if h.rejectedInARow >= agenticMaxRejectedInARow {
			return rs.forceFinalize(fmt.Sprintf("the model's last %d calls were rejected", h.rejectedInARow)), roundFinalized, nil
		}
	}
	return rs.forceFinalize(fmt.Sprintf("round %d reached its limit of %d model calls", h.round, agenticMaxStepsPerRound)), roundFinalized, nil
}

// searchQuestionAndParts is searchPolicy always's start: the question,
// then each of its parts (agentic_parts.go), searched before the model is
// asked, as its first searches, so a model that never calls a tool still
// answers from the documentation, on every part.
func (rs *researcher) searchQuestionAndParts(ctx context.Context, messages []model.Message) ([]model.Message, error) {
	messages, err := rs.searchFor(ctx, "call_question", rs.h.question, messages)
	if err != nil {
		return messages, err
	}
	for i, part := range rs.questionParts(ctx) {
		if messages, err = rs.searchFor(ctx, fmt.Sprintf("call_part_%d", i+1), part, messages); err != nil {
			return messages, err
		}
	}
	return messages, nil
}

// searchFor is a search the harness makes itself, written into the
// window as the model's call and its result, as if the model had made it.
func (rs *researcher) searchFor(ctx context.Context, id, query string, messages []model.Message) ([]model.Message, error) {
	arguments, _ := json.Marshal(map[string]string{"query": query})
	step := harnessStep{calls: []model.ToolCall{{ID: id, Name: agenticSearch, Arguments: string(arguments)}}, native: !rs.h.protocol.json}
	messages = append(messages, step.assistant())
	result, _, _, err := rs.answerCall(ctx, step.calls[0], messages)
	if err != nil {
		return messages, err
	}
	return append(messages, step.result(step.calls[0], result)), nil
}
