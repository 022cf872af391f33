package turn

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragroute/ragroute/internal/model"
)

// modelCall is one chat call of a turn.
type modelCall struct {
	// span names the call's span (ragroute.model.<span>); stage the
	// timing it adds to.
	span, stage string
	messages    []model.Message
	tools       []model.Tool
	gen         model.Generation
	// onDelta hears the reply's text as it streams; nil when the reply is
	// only read whole.
	onDelta func(string) error
	attrs   []attribute.KeyValue
	// judge: the call goes to the route's judge (AnswerSettings.Judge),
	// not the chat model; its tokens are counted apart.
	judge bool
}

// callModel makes one chat call of the turn, the one way every step
// calls a model, the chat model or the judge: under its span, with the
// model's first token marked on it, its time added to its stage and its
// tokens to the turn's usage (the judge's to its own).
func (t *turn) callModel(ctx context.Context, c modelCall) (model.Reply, error) {
	start := time.Now()
	ctx, span := startSpan(ctx, "ragroute.model."+c.span, c.attrs...)
	var onDelta func(string) error
	if c.onDelta != nil {
		first := true
		onDelta = func(text string) error {
			if first {
				first = false
				span.AddEvent("first token")
				span.SetAttributes(attribute.Int64("ragroute.time_to_first_token_ms", time.Since(start).Milliseconds()))
			}
			return c.onDelta(text)
		}
	}
	client := t.engine.Chat
	if c.judge {
		client = t.engine.Answer.Judge
	}
	reply, err := client.Stream(ctx, c.messages, c.tools, c.gen, onDelta)
	endSpan(span, err)
	t.state.took(c.stage, time.Since(start))
	t.state.add(reply.Usage, c.judge)
	return reply, err
}
