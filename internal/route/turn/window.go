package turn

import (
	"encoding/json"

	"github.com/ragroute/ragroute/internal/model"
)

// The context window every model call of a turn must fit: its messages,
// counted with the route's tokenizer (Window.Tokens, cl100k_base), and the
// answer reserve for the reply, within window.contextTokens. The
// conversation is trimmed once, at the turn's start, into its share of
// that room (fitHistory), so that the decide call, the condensed or
// rephrased query, the agentic rounds and the answer with its fragments
// all fit, and the fragments always keep the larger part.

// windowMargin is the part of the prompt's room kept free because the
// route counts with cl100k_base and the model with its own tokenizer.
// cl100k's 100k vocabulary is among the most compact for English and
// code; the 32k–50k vocabularies of the small models routes serve (Llama
// 2, Mistral, SmolLM2) write the same text in roughly 5–15% more tokens,
// and chat templates add a few tokens a message our framing estimate
// (4) may miss. 15% covers both for English documentation; a corpus in
// a language cl100k writes compactly and the model does not needs a
// smaller window.contextTokens.
const windowMargin = 0.15

// promptTokens is the most a model call's messages (and the tools it
// offers) may count with the route's tokenizer: the window less the answer
// reserve, less the margin.
func (w Window) promptTokens() int {
	return int(float64(w.ContextTokens-w.AnswerReserve) / (1 + windowMargin))
}

// messageTokens counts messages as a call sends them: each one's text,
// its tool calls' names and arguments, and about 4 tokens of framing
// each.
func (w Window) messageTokens(messages []model.Message) int {
	n := 0
	for _, m := range messages {
		n += w.Tokens.Count(m.Content) + 4
		for _, c := range m.ToolCalls {
			n += w.Tokens.Count(c.Name) + w.Tokens.Count(c.Arguments) + 4
		}
	}
	return n
}

// toolsTokens counts tool definitions as a call sends them.
func (w Window) toolsTokens(tools []model.Tool) int {
	data, _ := json.Marshal(tools)
	return w.Tokens.Count(string(data))
}

// historyShare is the most the conversation may count in a call whose
// system prompt and tools count fixed: half of what is left of the
// prompt's room. The other half at least is the fragments' (and the
// round's calls'): however long a chat, a turn still answers from the
// documentation.
func (w Window) historyShare(fixed int) int {
	return max(0, w.promptTokens()-fixed) / 2
}

// fitHistory trims the conversation, oldest first, into share tokens, and
// returns what is kept and how many messages were dropped. The last
// user message (the question) and what follows it are always kept, even
// over the share. It drops whole exchanges (a user message and the
// replies up to the next one), so a kept window opens with a user
// message, as some chat templates require, and an assistant's tool calls
// never lose their results.
func (w Window) fitHistory(messages []model.Message, share int) ([]model.Message, int) {
	start := len(messages) // where the kept window opens
	for i := len(messages) - 1; i >= 0; i-- {
		if messages[i].Role == model.RoleUser {
			start = i
			break
		}
	}
	if start == len(messages) {
		return messages, 0 // no question to keep: nothing to trim by
	}
	used := w.messageTokens(messages[start:])
	for end := start; end > 0; {
		open := end - 1 // the exchange before end opens at its user message
		for open > 0 && messages[open].Role != model.RoleUser {
			open--
		}
		n := w.messageTokens(messages[open:end])
		if used+n > share {
			break
		}
		used, start, end = used+n, open, open
	}
	return messages[start:], start
}

// trimHistory fits the turn's conversation beside fixed tokens (the
// system prompt and tools of the calls that carry it), and books how many
// messages were dropped.
func (t *turn) trimHistory(fixed int) {
	w := t.engine.Window
	t.in.Messages, t.state.checks.HistoryTrimmed = w.fitHistory(t.in.Messages, w.historyShare(fixed))
}
