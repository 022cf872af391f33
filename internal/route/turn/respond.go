package turn

import (
	"context"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// respond answers from what was packed, the one answer both modes end
// in: not found when nothing was packed or the answerability check says
// it does not answer; else the chat model writes it, or, in extractive
// mode or when the grounding policy replaces the model's answer, the
// route quotes the fragments.
func (t *turn) respond(ctx context.Context, ev evidence) (notFound bool, err error) {
	if len(ev.packing.Packed) == 0 {
		// Nothing to ground an answer on: say so honestly, never invent one.
		return t.notFound()
	}
	answerable, err := t.answerable(ctx, ev)
	if err != nil {
		return false, err
	}
	if !answerable {
		return t.notFound()
	}
	if t.engine.Answer.Mode == podconfig.AnswerExtractive {
		return t.extract(ctx, ev, nil)
	}
	out, err := t.generate(ctx, ev)
	if err != nil || !out.replaced {
		return out.notFound, err
	}
	return t.extract(ctx, ev, out.unitVectors)
}
