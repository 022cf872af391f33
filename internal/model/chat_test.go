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
