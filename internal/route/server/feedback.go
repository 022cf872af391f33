package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// POST /v1/turns/{id}/feedback: the user who asked a turn rates its
// answer, up or down, with an optional comment, the source they expected
// and whether the answer was invented. The last verdict on a turn wins.
// A verdict is kept with the turn's question, answer, citations and
// fragments for the route's feedback retention, for `ragroute feedback
// export` to turn into evaluation questions. Verdicts are admitted under
// the turns' limits, on their own budget (admission.go).

// Bounds of a verdict's text: a comment is a few sentences, a source a
// path.
const (
	MaxFeedbackCommentBytes = 2000
	MaxExpectedSourceBytes  = 512
)

type feedbackRequest struct {
	Rating  string `json:"rating"`
	Comment string `json:"comment,omitempty"`
	// ExpectedSource is the source (as the route names sources,
	// <source>/<path>) the user says holds the answer.
	ExpectedSource string `json:"expected_source,omitempty"`
	// Invented: the user says the answer was made up; with rating down
	// only.
	Invented bool `json:"invented,omitempty"`
}

func (req *feedbackRequest) check() error {
	bad := func(param, format string, args ...any) error {
		return &apiError{Status: http.StatusBadRequest, Code: "bad_feedback", Param: param, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case req.Rating != turnlog.RatingUp && req.Rating != turnlog.RatingDown:
		return bad("rating", "rating %q: want %q or %q", req.Rating, turnlog.RatingUp, turnlog.RatingDown)
	case req.Invented && req.Rating != turnlog.RatingDown:
		return bad("invented", "invented is a reason to rate an answer down: send it with rating %q", turnlog.RatingDown)
	case len(req.Comment) > MaxFeedbackCommentBytes:
		return bad("comment", "the comment has %d bytes; the limit is %d", len(req.Comment), MaxFeedbackCommentBytes)
	case !utf8.ValidString(req.Comment):
		return bad("comment", "the comment is not valid UTF-8")
	case len(req.ExpectedSource) > MaxExpectedSourceBytes:
		return bad("expected_source", "expected_source has %d bytes; the limit is %d", len(req.ExpectedSource), MaxExpectedSourceBytes)
	case !utf8.ValidString(req.ExpectedSource):
		return bad("expected_source", "expected_source is not valid UTF-8")
	}
	return nil
}

// feedbackTimeout bounds reading the turn and storing its verdict.
const feedbackTimeout = 10 * time.Second

// feedback stores the verdict of a turn's own user on its answer.
func (s *Server) feedback(w http.ResponseWriter, r *http.Request) error {
	if s.opts.Feedback == nil {
		return &apiError{Status: http.StatusNotFound, Code: "feedback_disabled",
			Message: "this route takes no feedback (its spec.feedback.enabled is false)"}
	}
	id, err := s.authenticate(r)
	if err != nil {
		return err
	}
	var req feedbackRequest
	if err := s.decode(w, r, &req, strictBody()); err != nil {
		return err
	}
	if err := req.check(); err != nil {
		return err
	}
	// A verdict costs a read and a write of the store (Redis with
	// replicas): it is admitted under the turns' limits, on a budget of
	// its own, before it costs anything.
	release, err := s.reserveVerdict(id.User)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), feedbackTimeout)
	defer cancel()
	turnID := r.PathValue("id")
	turn, err := s.opts.Feedback.Turn(ctx, turnID)
	if err != nil && !errors.Is(err, turnlog.ErrTurnNotFound) {
		return turnLogUnavailable(fmt.Errorf("read answered turn %s: %w", turnID, err))
	}
	if err != nil || turn.Owner != id.User {
		// Another user's turn does not exist, as far as this user knows:
		// the same answer, byte for byte, as for no turn at all.
		return &apiError{Status: http.StatusNotFound, Code: "turn_not_found",
			Message: "no answered turn " + turnID + " to rate: a turn can be rated by the user who asked it, until the route's turn retention passes"}
	}
	verdict := turnlog.Verdict{Rating: req.Rating, Comment: req.Comment, ExpectedSource: req.ExpectedSource, Invented: req.Invented, At: time.Now()}
	if err := s.opts.Feedback.Rate(ctx, turn, verdict); err != nil {
		return turnLogUnavailable(fmt.Errorf("store the verdict on turn %s: %w", turnID, err))
	}
	s.metrics.feedback.WithLabelValues(s.opts.ModelID, verdict.Rating).Inc()
	s.traceVerdict(r.Context(), turn, verdict)
	if s.opts.Logger != nil {
		// The comment may hold personal data: the log has its size only.
		sum := sha256.Sum256([]byte(id.User))
		s.opts.Logger.Info("turn rated", "turn", turnID, "user_hash", hex.EncodeToString(sum[:8]), "rating", verdict.Rating,
			"invented", verdict.Invented, "comment_bytes", len(verdict.Comment), "expected_source", verdict.ExpectedSource != "")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// traceVerdict adds the verdict to the turn's trace: a span under the
// turn's request span, linked to the feedback request's, with the event
// turn.rated.
func (s *Server) traceVerdict(ctx context.Context, turn turnlog.AnsweredTurn, v turnlog.Verdict) {
	if s.opts.Tracing == nil {
		return
	}
	traceID, err1 := trace.TraceIDFromHex(turn.TraceID)
	spanID, err2 := trace.SpanIDFromHex(turn.SpanID)
	if err1 != nil || err2 != nil {
		return // the turn was not traced
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled, Remote: true})
	_, span := s.opts.Tracing.Tracer("github.com/ragroute/ragroute/internal/route/server").Start(
		trace.ContextWithRemoteSpanContext(context.WithoutCancel(ctx), parent), "ragroute.feedback",
		trace.WithLinks(trace.LinkFromContext(ctx)))
	span.AddEvent("turn.rated", trace.WithAttributes(attribute.String("rating", v.Rating), attribute.Bool("invented", v.Invented),
		attribute.Bool("expected_source", v.ExpectedSource != ""), attribute.Int("comment_bytes", len(v.Comment))))
	span.End()
}

// keepAnswered records a finished turn as its user saw it, so they can
// rate it; a turn that failed has no answer to rate. A store that fails
// costs the turn nothing but its rating: it is logged.
func (s *Server) keepAnswered(turn turnlog.AnsweredTurn) {
	if s.opts.Feedback == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.turns), appendTimeout)
	defer cancel()
	turn.FinishedAt = time.Now()
	if err := s.opts.Feedback.Keep(ctx, turn); err != nil {
		s.logError("keep the answered turn for feedback; it cannot be rated", turn.ID, err)
	}
}

// answeredTurn is what the outcome o holds of a completed turn.
func answeredTurn(in turn.Input, owner string, sc trace.SpanContext, o *turn.Outcome) turnlog.AnsweredTurn {
	ext := extensionOf(in.ID, o)
	t := turnlog.AnsweredTurn{ID: in.ID, Owner: owner, Question: in.Question(), Answer: o.Answer(), NotFound: ext.NotFound,
		Citations: ext.Citations, Fragments: ext.Sources}
	if sc.IsValid() {
		t.TraceID, t.SpanID = sc.TraceID().String(), sc.SpanID().String()
	}
	return t
}
