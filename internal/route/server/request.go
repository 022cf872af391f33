package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// Every request that starts work (a turn, a completion, a search) is
// checked in one order before it costs anything: who asks, then its body,
// then what the body asks, then whether the route can search its index
// at all (servable), and only then does it take a slot of the user's and
// the replica's limits.

// requestBody is the JSON body of an endpoint that starts work.
type requestBody interface {
	// format is how the body is decoded.
	format() bodyFormat
	// check refuses what the route will not serve, as an *apiError, and
	// keeps what the handler needs of the rest.
	check(Limits) error
}

// admitted is a request let in: who asks, and the slot its work holds
// until release (which may be called more than once).
type admitted struct {
	identity identity.Identity
	release  func()
}

// admit authenticates r, decodes and checks its body into body, and
// admits its work. On success the caller must call release once the work
// is over.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, body requestBody) (admitted, error) {
	id, err := s.authenticate(r)
	if err != nil {
		return admitted{}, err
	}
	if err := s.decode(w, r, body, body.format()); err != nil {
		return admitted{}, err
	}
	return s.admitAs(id, body)
}

// admitAs checks a body already read and admits its work as id's: admit
// once the request is read, and an MCP tool call (mcptools.go), whose
// arguments the MCP SDK read. On success the caller must call release
// once the work is over.
func (s *Server) admitAs(id identity.Identity, body requestBody) (admitted, error) {
	if err := s.checkWork(body); err != nil {
		return admitted{}, err
	}
	release, err := s.reserve(id.User)
	if err != nil {
		return admitted{}, err
	}
	return admitted{identity: id, release: release}, nil
}

// checkWork refuses what a body already read asks that the route will not
// serve, then work while the route cannot search (servable): what admitAs
// checks before any limit.
func (s *Server) checkWork(body requestBody) error {
	if err := body.check(s.opts.Limits); err != nil {
		return err
	}
	return s.servable()
}

// servable refuses work while the index serving was built by another
// embedder or keyword analyzer than the route's: 503 embedder_mismatch or
// analyzer_mismatch, naming both, before anything is searched (a turn
// would only answer from noise).
func (s *Server) servable() error {
	if s.opts.Searcher == nil {
		return nil
	}
	if err := s.opts.Searcher.CheckIndex(); err != nil {
		return failed(turn.ErrorCode(context.Background(), err), err.Error()).withRetryAdvice()
	}
	return nil
}

// authenticate is the caller's verified identity, or a 401 *apiError.
func (s *Server) authenticate(r *http.Request) (identity.Identity, error) {
	id, err := s.opts.Auth.Authenticate(r)
	if err != nil {
		return identity.Identity{}, &apiError{Status: http.StatusUnauthorized, Code: "unauthenticated",
			Message: "a verified identity is required: " + err.Error()}
	}
	return id, nil
}

// checkMessages: only user and assistant messages (a client cannot inject
// a system prompt), the last from the user, within the limits.
func checkMessages(messages []model.Message, limits Limits) error {
	if len(messages) == 0 {
		return errors.New("messages is empty")
	}
	if len(messages) > limits.Messages {
		return fmt.Errorf("%d messages; the limit is %d", len(messages), limits.Messages)
	}
	for i, m := range messages {
		if m.Role != model.RoleUser && m.Role != model.RoleAssistant {
			return fmt.Errorf("messages[%d].role %q: want user or assistant", i, m.Role)
		}
		if len(m.Content) > limits.MessageBytes || !utf8.ValidString(m.Content) {
			return fmt.Errorf("messages[%d] is over %d bytes or not UTF-8", i, limits.MessageBytes)
		}
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
			return fmt.Errorf("messages[%d] carries tool calls; clients send text only", i)
		}
	}
	if last := messages[len(messages)-1]; last.Role != model.RoleUser || strings.TrimSpace(last.Content) == "" {
		return errors.New("the last message must be the user's question")
	}
	return nil
}
