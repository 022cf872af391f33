package turn

import (
	"context"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// The model's refusal overridden: when the answerability check let the
// question through and the model still answers with the not-found
// wording, a route may answer anyway (whenModelRefuses). A small model's
// own "not found" is barely better than chance (docs/eval.md): where the
// route's check finds what the question names in what was packed, the
// user would lose an answer the documents hold.
//
//   - quote: the extractive answer, cited quotes of the packed fragments
//     (no model call; the quoter embeds the question's sentences).
//   - askAgain: the model is told the fragments hold the answer and asked
//     once more (one more answer call); a second refusal stands.
//
// The answer is held back while it may still be the wording
// (answer.RefusalHold), so the client never reads a refusal that is then
// taken back.

// askAgainInstruction follows the model's refusal when it is asked again.
const askAgainInstruction = "The documentation fragments above do contain the answer to my question. " +
	"Answer it from them, citing the fragments you use as [S1], [S2]."

// overridesRefusal says whether a refusal of the model would be
// overridden for ev: the route says so, and its check let ev through.
func (t *turn) overridesRefusal(ev evidence) bool {
	how := t.engine.Answer.WhenModelRefuses
	return ev.verdict != nil && ev.verdict.Answerable && (how == podconfig.RefusalQuote || how == podconfig.RefusalAskAgain)
}

// overrideRefusal answers in place of the model's refusal, as the route
// says.
func (t *turn) overrideRefusal(ctx context.Context, ev evidence) (generated, error) {
	if t.engine.Answer.WhenModelRefuses == podconfig.RefusalQuote {
		notFound, err := t.extract(ctx, ev, nil)
		return generated{notFound: notFound}, err
	}
	reply := model.Message{Role: model.RoleAssistant, Content: t.prompt.notFound()}
	again := []model.Message{reply, {Role: model.RoleUser, Content: askAgainInstruction}}
	out, err := t.generate(ctx, ev, again)
	if err == nil && out.refused {
		notFound, err := t.notFound()
		return generated{notFound: notFound}, err
	}
	return out, err
}
