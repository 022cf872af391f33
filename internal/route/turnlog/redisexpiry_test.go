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

// Every key a turn writes expires, even when its replica dies before the
// turn's last event: the keys of a turn started and cut short after one
// event all have a TTL, within the retention plus the hour a turn may run.
func TestEveryKeyOfAnUnfinishedTurnExpires(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	prefix := fmt.Sprintf("t%d:", time.Now().UnixNano())
	log := NewRedis(client, sealtest.New(t), prefix, time.Minute)
	ctx := context.Background()
	if err := log.Start(ctx, "cut", "ann"); err != nil {
		t.Fatal(err)
	}
	if err := log.Append(ctx, "cut", turn.Event{Type: turn.EventDelta, Data: turn.Delta{Text: "half an answer"}}); err != nil {
		t.Fatal(err)
	}
	log.stopHeartbeat("cut") // the replica dies here

	keys, err := client.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 {
		t.Fatalf("keys %v: want the turn's meta, events and heartbeat", keys)
	}
	for _, key := range keys {
		ttl, err := client.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > time.Minute+time.Hour {
			t.Errorf("%s: TTL %v, want it to expire within the retention and an hour", key, ttl)
		}
	}
}

// A finished turn's keys are kept for the retention, its heartbeat gone.
func TestAFinishedTurnIsKeptForTheRetention(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	prefix := fmt.Sprintf("t%d:", time.Now().UnixNano())
	log := NewRedis(client, sealtest.New(t), prefix, time.Minute)
	ctx := context.Background()
	if err := log.Start(ctx, "done", "ann"); err != nil {
		t.Fatal(err)
	}
	if err := log.Append(ctx, "done", turn.Event{Type: turn.EventTurnCompleted, Data: turn.Completed{}}); err != nil {
		t.Fatal(err)
	}
	keys, err := client.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %v, %v: want the meta and the events, no heartbeat", keys, err)
	}
	for _, key := range keys {
		if ttl, err := client.PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > time.Minute {
			t.Errorf("%s: TTL %v, %v: want the retention", key, ttl, err)
		}
	}
}
