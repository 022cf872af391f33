package turnlog

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// clock is a settable time for retention tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// feedbackBackends are both Feedback stores, on a clock each test moves;
// each is opened with the subtest's own t, so the Redis one skips (under
// -short) or fails the subtest, never its parent from the wrong goroutine.
func feedbackBackends(window, retention time.Duration) map[string]func(*testing.T, *clock) Feedback {
	return map[string]func(*testing.T, *clock) Feedback{
		"memory": func(_ *testing.T, c *clock) Feedback { return NewMemoryFeedback(window, retention, 0, c.now) },
		"redis": func(t *testing.T, c *clock) Feedback {
			client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
			t.Cleanup(func() { _ = client.Close() })
			return NewRedisFeedback(client, sealtest.New(t), fmt.Sprintf("t%d:", time.Now().UnixNano()), window, retention, c.now)
		},
	}
}

func answered(id, owner string) AnsweredTurn {
	return AnsweredTurn{ID: id, Owner: owner, Question: "Who approves claims?", Answer: "Your team lead [S1].",
		Citations: []turn.Citation{{Marker: "S1", SourceURI: "docs/expenses.md", Heading: []string{"Expenses", "Approval"}}},
		Fragments: []turn.RetrievalSource{{Marker: "S1", SourceURI: "docs/expenses.md", HeadingPath: []string{"Expenses", "Approval"}}}}
}

// A kept turn reads back whole for its rating window; its verdict is kept
// once, the last one winning, with the question, answer, citations and
// fragments.
func TestFeedbackKeepsTheTurnWithItsLastVerdict(t *testing.T) {
	for name, open := range feedbackBackends(10*time.Minute, 24*time.Hour) {
		t.Run(name, func(t *testing.T) {
			c := &clock{t: time.Unix(1_700_000_000, 0)}
			f := open(t, c)
			ctx := context.Background()
			turn := answered("t1", "ann")
			if err := f.Keep(ctx, turn); err != nil {
				t.Fatal(err)
			}
			got, err := f.Turn(ctx, "t1")
			if err != nil || got.Owner != "ann" || got.Answer != turn.Answer || len(got.Citations) != 1 || len(got.Fragments) != 1 {
				t.Fatalf("Turn: %+v, %v", got, err)
			}
			if _, err := f.Turn(ctx, "nope"); err != ErrTurnNotFound {
				t.Fatalf("unknown turn: %v, want ErrTurnNotFound", err)
			}
			if err := f.Rate(ctx, got, Verdict{Rating: RatingUp, At: c.now()}); err != nil {
				t.Fatal(err)
			}
			c.advance(time.Second)
			if err := f.Rate(ctx, got, Verdict{Rating: RatingDown, Comment: "wrong team", ExpectedSource: "docs/travel.md", At: c.now()}); err != nil {
				t.Fatal(err)
			}
			verdicts, err := f.Verdicts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(verdicts) != 1 || verdicts[0].Verdict.Rating != RatingDown || verdicts[0].Verdict.ExpectedSource != "docs/travel.md" ||
				verdicts[0].Turn.Question != turn.Question || verdicts[0].Turn.Citations[0].SourceURI != "docs/expenses.md" {
				t.Fatalf("verdicts %+v: want the last one only, with its turn", verdicts)
			}
		})
	}
}

// A turn can be rated within its window only, and a verdict is gone
// after the feedback retention.
func TestFeedbackRetentionIsEnforced(t *testing.T) {
	for name, open := range feedbackBackends(10*time.Minute, time.Hour) {
		t.Run(name, func(t *testing.T) {
			c := &clock{t: time.Unix(1_700_000_000, 0)}
			f := open(t, c)
			ctx := context.Background()
			for _, id := range []string{"old", "new"} {
				if err := f.Keep(ctx, answered(id, "ann")); err != nil {
					t.Fatal(err)
				}
			}
			old, _ := f.Turn(ctx, "old")
			if err := f.Rate(ctx, old, Verdict{Rating: RatingDown, At: c.now()}); err != nil {
				t.Fatal(err)
			}
			c.advance(40 * time.Minute)
			if name == "memory" {
				if _, err := f.Turn(ctx, "new"); err != ErrTurnNotFound {
					t.Errorf("a turn past its rating window: %v, want ErrTurnNotFound", err)
				}
			}
			recent := answered("recent", "ann")
			if err := f.Rate(ctx, recent, Verdict{Rating: RatingDown, At: c.now()}); err != nil {
				t.Fatal(err)
			}
			c.advance(30 * time.Minute) // "old" is 70 minutes old, "recent" 30
			verdicts, err := f.Verdicts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(verdicts) != 1 || verdicts[0].Turn.ID != "recent" {
				t.Fatalf("verdicts %+v: want only the one within the retention", verdicts)
			}
		})
	}
}

// In Redis every feedback key expires: an answered turn with its rating
// window, a verdict and the index with the retention.
func TestRedisFeedbackKeysExpire(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	prefix := fmt.Sprintf("t%d:", time.Now().UnixNano())
	f := NewRedisFeedback(client, sealtest.New(t), prefix, 10*time.Minute, 720*time.Hour, time.Now)
	ctx := context.Background()
	turn := answered("t1", "ann")
	if err := f.Keep(ctx, turn); err != nil {
		t.Fatal(err)
	}
	if err := f.Rate(ctx, turn, Verdict{Rating: RatingDown, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{prefix + "turn:t1:answered": 10 * time.Minute, prefix + "feedback:t1": 720 * time.Hour, prefix + "feedback": 720 * time.Hour}
	keys, err := client.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) != len(want) {
		t.Fatalf("keys %v, %v: want %v", keys, err, want)
	}
	for key, limit := range want {
		if ttl, err := client.PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > limit {
			t.Errorf("%s: TTL %v, %v: want it to expire within %v", key, ttl, err, limit)
		}
	}
}

// A value written into the route's Redis by anyone but the route (or
// copied from another turn) is never read as an answered turn or a
// verdict.
func TestRedisFeedbackRefusesForgedValues(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	prefix := fmt.Sprintf("t%d:", time.Now().UnixNano())
	f := NewRedisFeedback(client, sealtest.New(t), prefix, time.Minute, time.Hour, time.Now)
	ctx := context.Background()
	if err := f.Keep(ctx, answered("mine", "mallory")); err != nil {
		t.Fatal(err)
	}
	sealed, err := client.Get(ctx, prefix+"turn:mine:answered").Result()
	if err != nil {
		t.Fatal(err)
	}
	// Copied to another turn's key: it would make mallory its owner.
	if err := client.Set(ctx, prefix+"turn:ann1:answered", sealed, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Turn(ctx, "ann1"); err != ErrTurnNotFound {
		t.Errorf("a copied answered turn: %v, want ErrTurnNotFound", err)
	}
	if err := client.Set(ctx, prefix+"feedback:x", `{"turn":{"id":"x"},"verdict":{"rating":"down"}}`, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	client.ZAdd(ctx, prefix+"feedback", redis.Z{Score: float64(time.Now().UnixMilli()), Member: "x"})
	if verdicts, err := f.Verdicts(ctx); err != nil || len(verdicts) != 0 {
		t.Errorf("verdicts %+v, %v: want a forged one left out", verdicts, err)
	}
}

// The memory store stays within its byte budget, the oldest verdicts
// giving way.
func TestMemoryFeedbackIsBounded(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	f := NewMemoryFeedback(time.Minute, time.Hour, 4096, c.now)
	ctx := context.Background()
	for i := range 100 {
		if err := f.Rate(ctx, answered(fmt.Sprint(i), "ann"), Verdict{Rating: RatingDown, At: c.now()}); err != nil {
			t.Fatal(err)
		}
	}
	verdicts, _ := f.Verdicts(ctx)
	if len(verdicts) == 0 || len(verdicts) >= 100 || verdicts[len(verdicts)-1].Turn.ID != "99" {
		t.Fatalf("%d verdicts, the last %+v: want the newest few within 4 KiB", len(verdicts), verdicts[len(verdicts)-1].Turn.ID)
	}
}
