package turn

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragroute/ragroute/internal/route/answer"
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
func (t *turn) generate(ctx context.Context, ev evidence) (generated, error) {
	var shown strings.Builder // the answer as the client reads it
	packing, grounding := ev.packing, t.engine.Answer.Grounding
	guard := answer.NewLinkGuard(packing.Links)
	checkCtx, checkSpan := startSpan(ctx, "ragroute.grounding", attribute.String("ragroute.policy", string(grounding.Policy)))
	gate := answer.NewGate(checkCtx, grounding, t.engine.checker(), packing.Packed, t.prompt.notFound(),
		func(g answer.Grounding) { t.emit(Grounding(g)) })
	pipe := answer.NewPipe(func(text string) error { shown.WriteString(text); return t.delta(text) },
		answer.NewFenceScrubber(packing.Fence), guard, gate)
	reply, err := t.callModel(ctx, modelCall{span: "answer", stage: "model_answer", messages: answerMessages(t.in.Messages, ev),
		gen: t.in.Generation, onDelta: pipe.Write, attrs: []attribute.KeyValue{attribute.Int("ragroute.fragments", len(packing.Packed))}})
	if err == nil {
		// What the turn waits for the check once the answer has ended.
		start := time.Now()
		err = pipe.Flush()
		t.state.took("grounding", time.Since(start))
	}
	if err != nil {
		pipe.Abort()
		endSpan(checkSpan, err)
		return generated{}, err
	}
	checkSpan.SetAttributes(attribute.Int("ragroute.checked", len(gate.Checked())), attribute.String("ragroute.unchecked", gate.Unchecked()))
	endSpan(checkSpan, gate.CheckErr())
	t.state.checks.LinksRemoved = guard.Removed()
	switch {
	case strings.TrimSpace(reply.Content) == "":
		// A model that asks for tools again gets no second round; with no
		// text of its own, the honest answer is the not-found wording.
		notFound, err := t.notFound()
		return generated{notFound: notFound}, err
	case t.prompt.isNotFound(reply.Content):
		return generated{notFound: true}, gate.Release()
	}
	replace, err := t.settle(gate, packing, &shown)
	if replace {
		// The check embedded the fragments' units; the extractive answer
		// that replaces this one scores the same units.
		return generated{replaced: true, unitVectors: gate.UnitVectors()}, err
	}
	return generated{}, err
}
