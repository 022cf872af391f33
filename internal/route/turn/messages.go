package turn

import "github.com/ragroute/ragroute/internal/model"

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

// Question is the turn's question: its conversation's last user message.
func (in Input) Question() string { return lastUserMessage(in.Messages) }
