package turn

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
)

// respond answers from what was packed, the one answer both modes end
// in: not found when nothing was packed or the answerability check
// refuses it (run here unless the mode ran it on this packing); else the
// chat model writes it, or, in extractive mode or when the grounding
// policy replaces the model's answer, the route quotes the fragments.
func (t *turn) respond(ctx context.Context, ev evidence) (notFound bool, err error) {
	if len(ev.packing.Packed) == 0 {
		// Nothing to ground an answer on: say so honestly, never invent one.
		return t.notFound()
	}
	if ev.verdict == nil {
		if ev.verdict, err = t.check(ctx, ev); err != nil {
			return false, err
		}
	}
	if ev.refused() {
		return t.notFound()
	}
	if t.engine.Answer.Mode == podconfig.AnswerExtractive {
		return t.extract(ctx, ev, nil)
	}
	out, err := t.generate(ctx, ev, nil)
	if err == nil && out.refused {
		out, err = t.overrideRefusal(ctx, ev)
	}
	if err != nil || !out.replaced {
		return out.notFound, err
	}
	return t.extract(ctx, ev, out.unitVectors)
}

// generated is how the answering call ended.
type generated struct {
	notFound bool
	// refused: the model answered with the not-found wording, held back
	// from the client because the route overrides it (refusal.go).
	refused bool
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
// again, when the model is asked once more, follows the answer's messages.
func (t *turn) generate(ctx context.Context, ev evidence, again []model.Message) (generated, error) {
	var shown strings.Builder // the answer as the client reads it
	packing, grounding := ev.packing, t.engine.Answer.Grounding
	guard := answer.NewLinkGuard(packing.Links)
	checkCtx, checkSpan := startSpan(ctx, "ragroute.grounding", attribute.String("ragroute.policy", string(grounding.Policy)))
	checker := t.engine.checker()
	checker.Judge = t.groundingJudge()
	gate := answer.NewGate(checkCtx, grounding, checker, packing.Packed, t.prompt.notFound(),
		func(g answer.Grounding) { t.emit(Grounding(g)) })
	stages := []answer.Stage{answer.NewFenceScrubber(packing.Fence), guard, gate}
	var hold *answer.RefusalHold
	if t.overridesRefusal(ev) {
		hold = answer.NewRefusalHold(t.prompt.wordings()...)
		stages = append([]answer.Stage{hold}, stages...)
	}
	pipe := answer.NewPipe(func(text string) error { shown.WriteString(text); return t.delta(text) }, stages...)
	messages := append(answerMessages(t.in.Messages, ev), again...)
	reply, err := t.callModel(ctx, modelCall{span: "answer", stage: "model_answer", messages: messages,
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
		override := podconfig.RefusalAccept
		if hold != nil && hold.Held() {
			override = t.engine.Answer.WhenModelRefuses
		}
		t.emit(ModelRefused{Override: string(override), Again: again != nil})
		return generated{notFound: override == podconfig.RefusalAccept, refused: override != podconfig.RefusalAccept}, gate.Release()
	}
	replace, err := t.settle(gate, packing, &shown)
	if replace {
		// The check embedded the fragments' units; the extractive answer
		// that replaces this one scores the same units.
		return generated{replaced: true, unitVectors: gate.UnitVectors()}, err
	}
	return generated{}, err
}

// settle ends a checked answer: the grounding summary, then either the
// citations (written, then inferred) or, when the policy does not let it
// stand, the decision to replace it with the extractive answer. shown is
// the answer as the client reads it, read once the gate has released
// what it held (strip and fallback hold the whole answer until then).
func (t *turn) settle(gate *answer.Gate, packing Packing, shown *strings.Builder) (replace bool, err error) {
	if err := gate.CheckErr(); err != nil {
		if gate.Policy() != podconfig.GroundingAnnotate {
			checkedBy := DependencyGroundingCheck
			if t.engine.Answer.Grounding.Scorer == podconfig.GroundingJudge {
				checkedBy = DependencyJudge
			}
			return false, &DependencyError{Dependency: checkedBy, Err: err} // nothing unchecked may be shown
		}
		// The answer has streamed: a failed check costs its report.
		if t.engine.Logger != nil {
			t.engine.Logger.Warn("grounding check failed", "error", err)
		}
	}
	checks := &t.state.checks
	checks.GroundedRatio, checks.Withheld, checks.GroundingUnchecked = gate.GroundedRatio(), gate.Withheld(), gate.Unchecked()
	if reason := gate.Replacement(); reason != "" {
		checks.AnswerReplaced = true
		t.emit(AnswerReplaced{GroundedRatio: *checks.GroundedRatio, Reason: reason})
		return true, nil
	}
	if err := gate.Release(); err != nil {
		return false, err
	}
	t.emitCitations(answer.Cited(shown.String(), packing.Packed), false)
	t.emitCitations(answer.Inferred(gate.Checked(), shown.String(), packing.Packed), true)
	return false, nil
}
