package turnlog

import (
	"context"
	"time"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// Feedback keeps each finished turn ratable by its user for a while, and
// the users' verdicts on them for the feedback retention, in the turn
// log's backend (NewMemoryFeedback, NewRedisFeedback).
type Feedback interface {
	// Keep records a finished turn so its user can rate it; it can be
	// rated for as long as the turn log keeps turns (spec.turns.retention).
	Keep(ctx context.Context, t AnsweredTurn) error
	// Turn is a kept turn; ErrTurnNotFound when it is unknown or past
	// its rating window.
	Turn(ctx context.Context, id string) (AnsweredTurn, error)
	// Rate stores v as the verdict on t, replacing an earlier one (the
	// last verdict wins), for the feedback retention.
	Rate(ctx context.Context, t AnsweredTurn, v Verdict) error
	// Verdicts are the verdicts within the retention, oldest first.
	Verdicts(ctx context.Context) ([]RatedTurn, error)
}

// Ratings a verdict may give.
const (
	RatingUp   = "up"
	RatingDown = "down"
)

// AnsweredTurn is a finished turn as its user saw it: what a verdict is
// about.
type AnsweredTurn struct {
	ID string `json:"id"`
	// Owner is the user who asked; only they may rate the turn.
	Owner    string `json:"owner"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	NotFound bool   `json:"not_found,omitempty"`
	// Citations are the sources the answer cited; Fragments every
	// fragment packed for it (their source URI and heading path name them).
	Citations []turn.Citation        `json:"citations"`
	Fragments []turn.RetrievalSource `json:"fragments"`
	// TraceID and SpanID place the turn in its trace, so a verdict's span
	// event joins it; empty without tracing.
	TraceID    string    `json:"trace_id,omitempty"`
	SpanID     string    `json:"span_id,omitempty"`
	FinishedAt time.Time `json:"finished_at"`
}

// Verdict is a user's rating of an answer.
type Verdict struct {
	Rating  string `json:"rating"`
	Comment string `json:"comment,omitempty"`
	// ExpectedSource is the source the user says holds the answer.
	ExpectedSource string `json:"expected_source,omitempty"`
	// Invented: the user says the answer was made up (rating down only).
	Invented bool      `json:"invented,omitempty"`
	At       time.Time `json:"at"`
}

// RatedTurn is a turn with its user's verdict.
type RatedTurn struct {
	Turn    AnsweredTurn `json:"turn"`
	Verdict Verdict      `json:"verdict"`
}
