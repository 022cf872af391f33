package turnlog

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
)

var redisServer = testenv.NewShared("Redis", testenv.StartRedis)

func TestMain(m *testing.M) {
	code := m.Run()
	redisServer.Stop()
	os.Exit(code)
}

// Streams waiting for events hold a connection each for their blocking
// read; with their own pool they never starve the writes of running turns
// (with one shared default pool of 20, the 21st waiting stream stalled).
func TestWaitingStreamsDoNotStarveWrites(t *testing.T) {
	addr := redisServer.Get(t).Addr
	client := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 4})
	waits := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
	t.Cleanup(func() { _ = client.Close(); _ = waits.Close() })
	log := NewRedis(client, sealtest.New(t), fmt.Sprintf("t%d:", time.Now().UnixNano()), time.Minute)
	log.Waits = waits
	ctx := context.Background()

	const waiting = 40 // ten times the command pool
	for i := range waiting {
		if err := log.Start(ctx, fmt.Sprint(i), "ann"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range waiting {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, _ = log.Read(ctx, fmt.Sprint(i), 0, 3*time.Second)
		}()
	}
	time.Sleep(300 * time.Millisecond) // the reads are blocked in Redis now

	// A running turn writes while every waiting read holds a connection.
	appended := make(chan error, 1)
	go func() {
		appended <- log.Append(ctx, "0", turn.Event{Type: turn.EventDelta, Data: turn.Delta{Text: "hi"}})
	}()
	select {
	case err := <-appended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second): // well under the reads' 3 s wait
		t.Fatal("a write waited for the blocked reads: the pools are shared")
	}
	wg.Wait()
	events, _, err := log.Read(ctx, "0", 0, 0)
	if err != nil || len(events) != 1 || events[0].ID != 1 || events[0].Type != turn.EventDelta {
		t.Fatalf("read back %+v, %v: want the one delta as event 1", events, err)
	}
}
