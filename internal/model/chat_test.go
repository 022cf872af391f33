package model

import (
	"context"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/testenv"
)

func TestChatStreamsTextAndAssemblesToolCalls(t *testing.T) {
	server := testenv.StartModelServer(8)
	defer server.Close()
	server.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		if len(req.Tools) > 0 {
			return testenv.ChatReply{ToolCalls: []testenv.ScriptedToolCall{
				{Name: "search_knowledge", Arguments: `{"query":"how do sync waves work"}`},
				{Name: "web_search", Arguments: `{"query":"argo cd release"}`},
			}}
		}
		return testenv.ChatReply{Content: "Sync waves order resources [S1]."}
	}
	chat := NewChat(ChatConfig{BaseURL: server.BaseURL(), Model: "m"})
	tools := []Tool{{Name: "search_knowledge", Parameters: map[string]any{"type": "object"}}}
	reply, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "sync waves?"}}, tools, Generation{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.ToolCalls) != 2 || reply.ToolCalls[0].Arguments != `{"query":"how do sync waves work"}` || reply.ToolCalls[1].Name != "web_search" || reply.ToolCalls[0].ID == "" {
		t.Fatalf("tool calls %+v", reply.ToolCalls)
	}
	var deltas []string
	reply, err = chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "sync waves?"}}, nil, Generation{}, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Content != "Sync waves order resources [S1]." || strings.Join(deltas, "") != reply.Content || len(deltas) < 3 || reply.Usage.PromptTokens != 100 {
		t.Fatalf("reply %+v deltas %q", reply, deltas)
	}
}

// A call with a JSON schema asks the server for it as response_format
// json_schema, strict, with the schema as given.
func TestChatAsksForTheJSONSchema(t *testing.T) {
	server := testenv.StartModelServer(8)
	defer server.Close()
	var got *testenv.ChatRequest
	server.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		got = &req
		return testenv.ChatReply{Content: `{"tool": "search", "query": "sync waves"}`}
	}
	chat := NewChat(ChatConfig{BaseURL: server.BaseURL(), Model: "m"})
	schema := &JSONSchema{Name: "action", Schema: []byte(`{"type":"object","properties":{"tool":{"const":"search"}}}`)}
	if _, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "sync waves?"}}, nil, Generation{JSONSchema: schema}, nil); err != nil {
		t.Fatal(err)
	}
	rf := got.ResponseFormat
	if rf == nil || rf.Type != "json_schema" || rf.JSONSchema.Name != "action" || !rf.JSONSchema.Strict || string(rf.JSONSchema.Schema) != string(schema.Schema) {
		t.Fatalf("response_format %+v", rf)
	}
	if _, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{}, nil); err != nil || got.ResponseFormat != nil {
		t.Errorf("a call without a schema sent response_format %+v (%v)", got.ResponseFormat, err)
	}
}

// A call asking for the first token's odds sends logprobs and
// top_logprobs and reads the candidates the server gives back; a call
// without TopLogprobs asks for none.
func TestChatReadsTheFirstTokensOdds(t *testing.T) {
	server := testenv.StartModelServer(8)
	defer server.Close()
	var got testenv.ChatRequest
	server.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		got = req
		return testenv.ChatReply{Content: "yes", FirstToken: map[string]float64{"yes": -0.2, "no": -1.7}}
	}
	chat := NewChat(ChatConfig{BaseURL: server.BaseURL(), Model: "m"})
	reply, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "answerable?"}}, nil, Generation{MaxTokens: 1, TopLogprobs: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Logprobs || got.TopLogprobs != 5 {
		t.Fatalf("request logprobs %v top_logprobs %d, want true 5", got.Logprobs, got.TopLogprobs)
	}
	odds := map[string]float64{}
	for _, c := range reply.FirstToken {
		odds[c.Token] = c.Logprob
	}
	if len(odds) != 2 || odds["yes"] != -0.2 || odds["no"] != -1.7 {
		t.Fatalf("first token candidates %+v", reply.FirstToken)
	}
	if _, err := chat.Stream(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil, Generation{}, nil); err != nil || got.Logprobs {
		t.Errorf("a call without TopLogprobs asked for logprobs (%v)", err)
	}
}
