package turn

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// generated is how the answering call ended.
type generated struct {
	notFound bool
	// replaced: the grounding policy did not let the answer stand; the
	// extractive answer replaces it, reusing the check's unitVectors.
	replaced    bool
	unitVectors [][]float32
}

// generate is the answering call: the tool results appended (calls past
// the cap answered "not run"), no tools offered, and the reply streamed
// through the answer's stages: the fence markers it echoes scrubbed, the
// links it was not given removed, each sentence checked against the
// fragments as the grounding policy says. Then the citations it used.
func (r *Engine) generate(ctx context.Context, history []model.Message, calls []model.ToolCall, results []retrieval.Retrieval, packing Packing,
	st *turnState) (generated, error) {
	var shown strings.Builder // the answer as the client reads it
	guard := answer.NewLinkGuard(packing.Links)
	checkCtx, checkSpan := startSpan(ctx, "ragroute.grounding", attribute.String("ragroute.policy", string(r.Grounding.Policy)))
	gate := answer.NewGate(checkCtx, r.Grounding, r.checker(), packing.Packed, st.prompt.notFound(),
		func(g answer.Grounding) { st.emit(NewEvent(Grounding(g))) })
	pipe := answer.NewPipe(func(text string) error { shown.WriteString(text); return st.delta(text) },
		answer.NewFenceScrubber(packing.Fence), guard, gate)
	reply, err := r.callModel(ctx, st, modelCall{span: "answer", stage: "model_answer", messages: answerMessages(history, calls, results, packing),
		gen: st.gen, onDelta: pipe.Write, attrs: []attribute.KeyValue{attribute.Int("ragroute.fragments", len(packing.Packed))}})
	if err == nil {
		// What the turn waits for the check once the answer has ended.
		start := time.Now()
		err = pipe.Flush()
		st.took("grounding", time.Since(start))
	}
	if err != nil {
		pipe.Abort()
		endSpan(checkSpan, err)
		return generated{}, err
	}
	checkSpan.SetAttributes(attribute.Int("ragroute.checked", len(gate.Checked())), attribute.String("ragroute.unchecked", gate.Unchecked()))
	endSpan(checkSpan, gate.CheckErr())
	st.linksRemoved = guard.Removed()
	switch {
	case strings.TrimSpace(reply.Content) == "":
		// A model that asks for tools again gets no second round; with no
		// text of its own, the honest answer is the not-found wording.
		notFound, err := st.notFound()
		return generated{notFound: notFound}, err
	case st.prompt.isNotFound(reply.Content):
		return generated{notFound: true}, gate.Release()
	}
	replace, err := r.settle(gate, packing, &shown, st)
	if replace {
		// The check embedded the fragments' units; the extractive answer
		// that replaces this one scores the same units.
		return generated{replaced: true, unitVectors: gate.UnitVectors()}, err
	}
	return generated{}, err
}

// answerMessages are the answering call's window: the conversation under
// the packing's system message, the round's calls and a result for each.
// A packed fragment is in the result of the first call that found it
// only: the packing budgeted it once.
func answerMessages(history []model.Message, calls []model.ToolCall, results []retrieval.Retrieval, packing Packing) []model.Message {
	messages := withSystem(packing.System, history)
	messages = append(messages, model.Message{Role: model.RoleAssistant, ToolCalls: calls})
	given := map[string]bool{}
	for i, call := range calls {
		if i >= len(results) {
			// Past the round's cap: the protocol wants a result for every
			// call id, and the model must learn the call did not run.
			messages = append(messages, model.Message{Role: model.RoleTool, ToolCallID: call.ID, Content: notRunResult(len(results))})
			continue
		}
		ids := map[string]bool{}
		for _, f := range results[i].Fragments {
			if !given[f.ID] {
				ids[f.ID], given[f.ID] = true, true
			}
		}
		messages = append(messages, model.Message{Role: model.RoleTool, ToolCallID: call.ID, Content: packing.context(ids)})
	}
	return messages
}
