package turn

import (
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// The conversation is trimmed oldest first, by whole exchanges, so the
// kept window opens with a user message and ends with the question,
// which is kept even when it alone is over the share.
func TestFitHistoryDropsWholeExchangesOldestFirst(t *testing.T) {
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		t.Fatal(err)
	}
	r := Window{Tokens: tokens}
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }
	user := func(s string) model.Message { return model.Message{Role: model.RoleUser, Content: s} }
	assistant := func(s string) model.Message { return model.Message{Role: model.RoleAssistant, Content: s} }
	chat := []model.Message{assistant("Hello, ask me anything."), user(words(100)), assistant(words(100)), assistant(words(10)),
		user(words(50)), assistant(words(50)), user("How are sync waves ordered?")}
	question := r.messageTokens(chat[6:])
	last := r.messageTokens(chat[4:6])

	cases := []struct {
		share, kept int
	}{
		{1 << 20, 7},               // everything fits: nothing trimmed
		{question + last, 3},       // the last exchange and the question
		{question + last - 1, 1},   // one token short: the exchange goes whole
		{0, 1},                     // the question is kept over the share
		{r.messageTokens(chat), 7}, // exactly the conversation
	}
	for _, tc := range cases {
		kept, dropped := r.fitHistory(chat, tc.share)
		if len(kept) != tc.kept || dropped != len(chat)-tc.kept {
			t.Errorf("share %d: kept %d, dropped %d; want %d kept", tc.share, len(kept), dropped, tc.kept)
			continue
		}
		if kept[len(kept)-1].Content != "How are sync waves ordered?" {
			t.Errorf("share %d: the question was not kept last", tc.share)
		}
		if tc.kept < len(chat) && kept[0].Role != model.RoleUser {
			t.Errorf("share %d: a trimmed window opens with %s", tc.share, kept[0].Role)
		}
	}
}
