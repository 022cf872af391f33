package model

import (
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Bounds of one streamed reply. A server that honours max_tokens stays
// far below them; one that ignores it (or answers with thousands of tool
// calls) would otherwise grow the reply until the call's timeout, in the
// route's memory.
const (
	// MaxReplyBytes bounds a reply's text and tool calls (ids, names and
	// arguments) together: 8 MiB is 8 bytes a token at the largest
	// maxTokens a QueryRoute accepts (1,048,576), twice an English
	// token's length, so no answer a server was asked for reaches it.
	MaxReplyBytes = 8 << 20
	// MaxToolCalls bounds a reply's tool-call indexes: 0 to 127. The
	// route offers a handful of tools and runs a few calls a round.
	MaxToolCalls = 128
)

// replyBuilder assembles a streamed reply within MaxReplyBytes and
// MaxToolCalls.
type replyBuilder struct {
	content strings.Builder
	// calls are the tool calls by index; nil where none came.
	calls []*toolCallBuilder
	bytes int
	// firstToken: the first token's candidates, once read.
	firstToken []TokenLogprob
}

type toolCallBuilder struct {
	id              string
	name, arguments strings.Builder
}

// setFirstToken keeps the first token's candidates, at most limit of
// them (what the call asked for), the first time a chunk carries them.
func (b *replyBuilder) setFirstToken(candidates []openai.ChatCompletionTokenLogprobTopLogprob, limit int) {
	if b.firstToken != nil || len(candidates) == 0 {
		return
	}
	for _, c := range candidates[:min(len(candidates), limit)] {
		b.firstToken = append(b.firstToken, TokenLogprob{Token: c.Token, Logprob: c.Logprob})
	}
}

// grow counts n more bytes, or says the reply is past MaxReplyBytes.
func (b *replyBuilder) grow(n int) error {
	if b.bytes+n > MaxReplyBytes {
		return fmt.Errorf("the reply ran past %d bytes (model.MaxReplyBytes): the server ignores max_tokens", MaxReplyBytes)
	}
	b.bytes += n
	return nil
}

// addContent appends a delta of the answer's text.
func (b *replyBuilder) addContent(delta string) error {
	if err := b.grow(len(delta)); err != nil {
		return err
	}
	b.content.WriteString(delta)
	return nil
}

// addToolCall appends a fragment of the tool call at index.
func (b *replyBuilder) addToolCall(index int, id, name, arguments string) error {
	if index < 0 || index >= MaxToolCalls {
		return fmt.Errorf("tool call index %d is outside 0 to %d (model.MaxToolCalls)", index, MaxToolCalls-1)
	}
	if err := b.grow(len(id) + len(name) + len(arguments)); err != nil {
		return err
	}
	if index >= len(b.calls) {
		b.calls = append(b.calls, make([]*toolCallBuilder, index+1-len(b.calls))...)
	}
	call := b.calls[index]
	if call == nil {
		call = &toolCallBuilder{}
		b.calls[index] = call
	}
	if id != "" {
		call.id = id
	}
	call.name.WriteString(name)
	call.arguments.WriteString(arguments)
	return nil
}

// reply is what was assembled, the tool calls in index order.
func (b *replyBuilder) reply(usage Usage) Reply {
	reply := Reply{Content: b.content.String(), Usage: usage, FirstToken: b.firstToken}
	for _, call := range b.calls {
		if call != nil {
			reply.ToolCalls = append(reply.ToolCalls, ToolCall{ID: call.id, Name: call.name.String(), Arguments: call.arguments.String()})
		}
	}
	return reply
}
