package turnlog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// A browser's EventSource reconnects with the last event's id after a
// finished turn's stream closes: a read at or past that id must say done
// at once, not wait for an event that never comes.
func TestReadAtTheEndOfAFinishedTurnIsDoneAtOnce(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	logs := map[string]Log{
		"memory": NewMemory(time.Minute, 10, 0, time.Now),
		"redis":  NewRedis(client, sealtest.New(t), fmt.Sprintf("t%d:", time.Now().UnixNano()), time.Minute),
	}
	for name, log := range logs {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if err := log.Start(ctx, "turn", "ann"); err != nil {
				t.Fatal(err)
			}
			for _, ev := range []turn.Event{
				{Type: turn.EventDelta, Data: turn.Delta{Text: "hi"}},
				{Type: turn.EventTurnCompleted, Data: turn.Completed{}},
			} {
				if err := log.Append(ctx, "turn", ev); err != nil {
					t.Fatal(err)
				}
			}
			for _, after := range []int64{2, 5} {
				start := time.Now()
				events, done, err := log.Read(ctx, "turn", after, 5*time.Second)
				if err != nil || !done || len(events) != 0 {
					t.Errorf("read after %d: %+v, done %v, %v: want nothing, done", after, events, done, err)
				}
				if waited := time.Since(start); waited > time.Second {
					t.Errorf("read after %d waited %v for events of a finished turn", after, waited)
				}
			}
		})
	}
}
