package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// countingFeedback counts the reads and writes that reach the store.
type countingFeedback struct {
	turnlog.Feedback
	calls atomic.Int64
}

func (c *countingFeedback) Turn(ctx context.Context, id string) (turnlog.AnsweredTurn, error) {
	c.calls.Add(1)
	return c.Feedback.Turn(ctx, id)
}

func (c *countingFeedback) Rate(ctx context.Context, t turnlog.AnsweredTurn, v turnlog.Verdict) error {
	c.calls.Add(1)
	return c.Feedback.Rate(ctx, t, v)
}

// Verdicts are admitted under the turns' limits, on their own budget:
// ann, past her rate, is refused with 429 rate_limited and a Retry-After
// before the store is read; bob is served, and so is ann once her bucket
// refilled.
func TestFeedbackIsAdmittedUnderTheUsersLimits(t *testing.T) {
	clock := newTestClock()
	store := &countingFeedback{Feedback: turnlog.NewMemoryFeedback(time.Minute, time.Hour, 0, clock.now)}
	for _, turn := range []turnlog.AnsweredTurn{{ID: "ann-turn", Owner: "ann"}, {ID: "bob-turn", Owner: "bob"}} {
		if err := store.Keep(context.Background(), turn); err != nil {
			t.Fatal(err)
		}
	}
	srv := serveBare(t, func(o *Options) {
		o.Feedback, o.Now = store, clock.now
		o.Limits.ConcurrentTurnsPerUser, o.Limits.TurnsPerMinutePerUser = 2, 2
	})
	rate := func(user string) (status int, retryAfter string, apiErr struct{ Code, Message string }) {
		return post(t, srv, "/v1/turns/"+user+"-turn/feedback", user, `{"rating":"up"}`)
	}

	for i := range 2 {
		if status, _, apiErr := rate("ann"); status != http.StatusNoContent {
			t.Fatalf("ann's verdict %d within her rate: %d %+v", i+1, status, apiErr)
		}
	}
	before := store.calls.Load()
	status, retryAfter, apiErr := rate("ann")
	seconds, err := strconv.Atoi(retryAfter)
	if status != http.StatusTooManyRequests || apiErr.Code != "rate_limited" || !strings.Contains(apiErr.Message, "per minute") ||
		err != nil || seconds < 1 || seconds > 30 {
		t.Errorf("ann's verdict past her rate: %d %+v Retry-After %q, want 429 rate_limited within 30 s", status, apiErr, retryAfter)
	}
	if calls := store.calls.Load() - before; calls != 0 {
		t.Errorf("the refused verdict reached the store %d times", calls)
	}
	if status, _, apiErr := rate("bob"); status != http.StatusNoContent {
		t.Errorf("bob's verdict while ann is refused: %d %+v", status, apiErr)
	}
	clock.advance(30 * time.Second)
	if status, _, apiErr := rate("ann"); status != http.StatusNoContent {
		t.Errorf("ann's verdict once her bucket refilled: %d %+v", status, apiErr)
	}
}

// Rating an answer spends no turn: a user who asks, rates and asks again
// within seconds (the page's thumbs, make demo) is not refused for it,
// and a user whose verdicts' budget is spent may still ask.
func TestAVerdictSpendsNoTurn(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	limits := DefaultLimits()
	limits.ConcurrentTurnsPerUser, limits.TurnsPerMinutePerUser = 2, 2
	s := New(ctx, Options{Limits: limits, Now: newTestClock().now})
	for i := range 2 {
		release, err := s.reserveVerdict("ann")
		if err != nil {
			t.Fatalf("verdict %d: %v", i+1, err)
		}
		release()
	}
	if _, err := s.reserveVerdict("ann"); err == nil {
		t.Fatal("a third verdict within the minute was admitted")
	}
	for i := range 2 {
		release, err := s.reserve("ann")
		if err != nil {
			t.Fatalf("ann's turn %d after her verdicts: %v, want it admitted", i+1, err)
		}
		release()
	}
}
