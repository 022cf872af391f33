package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// The MCP tool ask plays a whole turn as the OpenAI facade does (the
// route's mode, grounding policy and citations), through the turn's
// driver (drive.go), and answers it whole; the answer's text also goes
// out piece by piece as progress.

// askArguments are ask's arguments.
type askArguments struct {
	Question string `json:"question"`
}

func (*askArguments) format() bodyFormat { return strictBody() }

func (a *askArguments) check(limits Limits) error {
	if strings.TrimSpace(a.Question) == "" || len(a.Question) > limits.MessageBytes || !utf8.ValidString(a.Question) {
		return &apiError{Status: http.StatusBadRequest, Code: "bad_question", Param: "question",
			Message: fmt.Sprintf("question must be 1 to %d bytes of UTF-8 text", limits.MessageBytes)}
	}
	return nil
}

// asked is ask's structured result.
type asked struct {
	TurnID        string          `json:"turn_id"`
	Answer        string          `json:"answer"`
	Citations     []turn.Citation `json:"citations"`
	NotFound      bool            `json:"not_found"`
	GroundedRatio *float64        `json:"grounded_ratio,omitempty"`
}

// askTool plays a turn of one question to its end as the caller, sending
// each piece of the answer's text as a progress notification when the
// client asked for progress.
func (s *Server) askTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args askArguments
	in, err := s.admitTool(ctx, req.Params.Arguments, &args, toolAsk, `{"question": string}`)
	if err != nil {
		return s.toolFailed(toolAsk, err), nil
	}
	caller, _ := callerOf(ctx)
	input := turn.Input{ID: caller.requestID, Messages: []model.Message{{Role: model.RoleUser, Content: args.Question}},
		Principals: in.identity.Principals()}
	progress := progressOf(req)
	outcome := s.turnOf(in, input, "mcp").drive(ctx, func(ctx context.Context, ev turn.Event) error {
		if delta, ok := ev.Data.(turn.Delta); ok {
			progress.send(ctx, delta.Text)
		}
		return nil
	})
	if outcome.Failed != nil {
		return s.toolFailed(toolAsk, turnFailed(*outcome.Failed)), nil
	}
	ext := extensionOf(input.ID, outcome)
	out := asked{TurnID: input.ID, Answer: outcome.Answer(), Citations: ext.Citations, NotFound: ext.NotFound, GroundedRatio: ext.GroundedRatio}
	text := out.Answer
	for _, c := range out.Citations {
		text += fmt.Sprintf("\n[%s] %s %s", c.Marker, c.Title, c.SourceURI)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: out}, nil
}

// progress sends an ask's answer text, piece by piece, as progress
// notifications of the call's progress token; a call without one gets
// none.
type progress struct {
	session *mcp.ServerSession
	token   any
	sent    float64
}

func progressOf(req *mcp.CallToolRequest) *progress {
	return &progress{session: req.Session, token: req.Params.GetProgressToken()}
}

// send notifies one piece of text. A notification that cannot be sent is
// dropped: the answer still comes whole in the result.
func (p *progress) send(ctx context.Context, text string) {
	if p.token == nil || p.session == nil || text == "" {
		return
	}
	p.sent++
	_ = p.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.sent, Message: text})
}
