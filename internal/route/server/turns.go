package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// POST /v1/turns starts a turn in the background and answers at once;
// GET /v1/turns/{id}/events streams its events from the turn log.

type turnRequest struct {
	Messages []model.Message `json:"messages"`
	// ConversationID is the client's name for the conversation the turn
	// belongs to (checkConversationID); turn.started carries it.
	ConversationID string `json:"conversation_id,omitempty"`
}

func (*turnRequest) format() bodyFormat { return strictBody() }

func (req *turnRequest) check(limits Limits) error {
	if err := checkMessages(req.Messages, limits); err != nil {
		return &apiError{Status: http.StatusBadRequest, Code: "bad_messages", Message: err.Error()}
	}
	if err := checkConversationID(req.ConversationID); err != nil {
		return &apiError{Status: http.StatusBadRequest, Code: "bad_conversation_id", Param: "conversation_id", Message: err.Error()}
	}
	return nil
}

// maxConversationIDBytes bounds a conversation id: a UUID, a hex digest or
// a prefixed id ("conv_…") fit many times over.
const maxConversationIDBytes = 128

// checkConversationID accepts "" (no conversation) or up to
// maxConversationIDBytes ASCII letters, digits and - _ . :. The id reaches
// every reader of the turn's stream and its trace span, so it carries no
// markup, spaces or control characters.
func checkConversationID(id string) error {
	valid := len(id) <= maxConversationIDBytes
	for i := 0; valid && i < len(id); i++ {
		c := id[i]
		valid = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':'
	}
	if !valid {
		return fmt.Errorf("conversation_id must be at most %d ASCII letters, digits, '-', '_', '.' or ':'", maxConversationIDBytes)
	}
	return nil
}

// submit starts a turn and answers 202 with where to stream it.
func (s *Server) submit(w http.ResponseWriter, r *http.Request) error {
	var req turnRequest
	in, err := s.admit(w, r, &req)
	if err != nil {
		return err
	}
	turnID := requestID(w)
	if err := s.opts.Log.Start(r.Context(), turnID, in.identity.User); err != nil {
		in.release()
		if errors.Is(err, turnlog.ErrTooManyTurns) {
			return &apiError{Status: http.StatusServiceUnavailable, Code: "turn_not_started", Message: err.Error(), RetryAfter: retrySoon}
		}
		return turnLogUnavailable(fmt.Errorf("start turn %s: %w", turnID, err))
	}
	input := turn.Input{ID: turnID, ConversationID: req.ConversationID, Messages: req.Messages, Principals: in.identity.Principals()}
	go s.play(s.turnOf(in, input, "turns"), trace.SpanFromContext(r.Context()))
	writeJSON(w, http.StatusAccepted, map[string]string{"turn_id": turnID, "stream_url": "/v1/turns/" + turnID + "/events"})
	return nil
}

// play plays a turn in the background, appending its events to the log.
// The turn outlives the request that asked it, within the route's drain
// (New's ctx); its spans join the request's trace, under parent. A turn
// whose log fails is cancelled: no client could read the rest of it.
func (s *Server) play(t turnDriver, parent trace.Span) {
	logFailed := false
	t.drive(trace.ContextWithSpan(s.turns, parent), func(ctx context.Context, ev turn.Event) error {
		if logFailed && !ev.Final() {
			return nil
		}
		// The log's context is not the turn's: a cancelled turn still
		// records its error event, also after the log failed once (it may
		// be back), so a reader's stream ends.
		if err := s.appendEvent(ctx, t.input.ID, ev); err != nil && !logFailed {
			logFailed = true
			s.logError("append turn event; the turn is cancelled", t.input.ID, err)
			return err
		}
		return nil
	})
}

// appendTimeout bounds writing one event to the turn log.
const appendTimeout = 10 * time.Second

// appendEvent writes one event of a running turn under appendTimeout.
func (s *Server) appendEvent(ctx context.Context, turnID string, ev turn.Event) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
	defer cancel()
	return s.opts.Log.Append(ctx, turnID, ev)
}

// events streams a turn's events as Server-Sent Events, resuming after
// Last-Event-ID.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	id, err := s.authenticate(r)
	if err != nil {
		return err
	}
	turnID := r.PathValue("id")
	owner, err := s.opts.Log.Owner(r.Context(), turnID)
	if err != nil && !errors.Is(err, turnlog.ErrTurnNotFound) {
		return turnLogUnavailable(fmt.Errorf("read the owner of turn %s: %w", turnID, err))
	}
	if err != nil || owner != id.User {
		// Another user's turn does not exist, as far as this user knows.
		return &apiError{Status: http.StatusNotFound, Code: "turn_not_found", Message: "no turn " + turnID}
	}
	after := int64(0)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		if after, err = strconv.ParseInt(last, 10, 64); err != nil || after < 0 {
			return &apiError{Status: http.StatusBadRequest, Code: "bad_last_event_id", Message: "Last-Event-ID must be an event id"}
		}
	}
	ctx, closeStream, err := s.openStream(r.Context(), id.User)
	if err != nil {
		return err
	}
	defer closeStream()
	stream, err := startSSE(w, s.opts.Limits.StreamWriteTimeout)
	if err != nil {
		return err
	}
	for {
		events, done, err := s.opts.Log.Read(ctx, turnID, after, s.opts.Limits.KeepAlive)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, turnlog.ErrTurnNotFound) {
				s.streamTurnLogUnavailable(stream, turnID, err)
			}
			// The client gone, the drain over (the client resumes with
			// Last-Event-ID elsewhere), the turn freed, or the log down.
			return nil
		}
		err = stream.send(func(w io.Writer) {
			if len(events) == 0 && !done {
				_, _ = io.WriteString(w, ": keep-alive\n\n")
			}
			for _, ev := range events {
				writeEvent(w, ev)
				after = ev.ID
			}
		})
		if err != nil || done {
			return nil // the client stopped reading (or left), or the turn ended
		}
	}
}
