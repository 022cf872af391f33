package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// The conversation id a client sends with a turn reaches the turn:
// turn.started carries it.
func TestConversationIDReachesTheTurn(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	srv := serve(t, w)
	const conversation = "conv_0f8e-41:b.2"
	resp := do(t, "POST", srv.URL+"/v1/turns", "ann",
		`{"messages":[{"role":"user","content":"How are sync waves ordered?"}],"conversation_id":"`+conversation+`"}`)
	var submitted struct {
		TurnID string `json:"turn_id"`
	}
	err := json.NewDecoder(resp.Body).Decode(&submitted)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("submit with a conversation id: %d %v", resp.StatusCode, err)
	}
	turnID := submitted.TurnID
	resp = do(t, "GET", srv.URL+"/v1/turns/"+turnID+"/events", "ann", "")
	events := readSSE(t, resp.Body, 1)
	resp.Body.Close()
	var started turn.Started
	if len(events) != 1 || events[0].typ != turn.EventTurnStarted || json.Unmarshal([]byte(events[0].data), &started) != nil {
		t.Fatalf("first event %+v, want turn.started", events)
	}
	if started.ConversationID != conversation || started.TurnID != turnID {
		t.Errorf("turn.started %+v, want conversation %q", started, conversation)
	}
}

// A conversation id that is too long or carries other characters than
// letters, digits and - _ . : is refused before any work, with a 400
// naming the field.
func TestBadConversationIDIsRefusedNamingTheField(t *testing.T) {
	srv := serveBare(t, func(*Options) {})
	for _, id := range []string{strings.Repeat("a", maxConversationIDBytes+1), "conv 1", "conv\n1", "<script>", "conv/1", "ünïcode", `a\"b`} {
		raw, _ := json.Marshal(id)
		resp := do(t, "POST", srv.URL+"/v1/turns", "ann", `{"messages":[{"role":"user","content":"hi"}],"conversation_id":`+string(raw)+`}`)
		var got openAIError
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || got.Error.Code != "bad_conversation_id" || got.Error.Param == nil ||
			*got.Error.Param != "conversation_id" || !strings.Contains(got.Error.Message, "conversation_id") {
			t.Errorf("conversation_id %q: %d %+v, want 400 bad_conversation_id naming the field", id, resp.StatusCode, got.Error)
		}
	}
}

// No conversation id, or one of up to 128 letters, digits and - _ . :
// (a UUID, a hex digest, a prefixed id) is taken.
func TestConversationIDCheck(t *testing.T) {
	for id, ok := range map[string]bool{
		"": true, "0f8e41b2c3d4e5f60718293a4b5c6d7e": true, "123e4567-e89b-12d3-a456-426614174000": true,
		"conv_abc.def:1": true, strings.Repeat("z", maxConversationIDBytes): true,
		strings.Repeat("z", maxConversationIDBytes+1): false, " ": false, "a b": false, "a\x00": false, "a/b": false, "é": false,
	} {
		if err := checkConversationID(id); (err == nil) != ok {
			t.Errorf("checkConversationID(%q) = %v, want ok %v", id, err, ok)
		}
	}
}
