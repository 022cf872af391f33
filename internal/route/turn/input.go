package turn

import "github.com/ragroute/ragroute/internal/model"

// Input is one turn: the conversation so far (ending with the user's
// question) and who asks.
type Input struct {
	ID string
	// ConversationID is the client's name for the conversation the turn
	// belongs to ("" when it gave none); turn.started and the turn's span
	// carry it, so the turns of one conversation can be found together.
	ConversationID string
	Messages       []model.Message
	Principals     []string
	// Generation is what the client asked of the answer's sampling (the
	// OpenAI facade's max_tokens, temperature, stop); it lowers the
	// route's settings, never raises them.
	Generation model.Generation
}

// Question is the turn's question: its conversation's last user message.
func (in Input) Question() string { return lastUserMessage(in.Messages) }

// The conversation as the turn's model calls are given it.

// withSystem is the conversation under a system message.
func withSystem(system string, history []model.Message) []model.Message {
	return append([]model.Message{{Role: model.RoleSystem, Content: system}}, history...)
}

// lastUserMessage is the question: the conversation's last user message.
func lastUserMessage(messages []model.Message) string {
	for i := len(messages) - 1; i >= 0; i-- {
		if messages[i].Role == model.RoleUser {
			return messages[i].Content
		}
	}
	return ""
}
