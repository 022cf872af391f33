package vectorcache

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/testenv"
)

var redisServer = testenv.NewShared("Redis", testenv.StartRedis)

func TestMain(m *testing.M) {
	code := m.Run()
	redisServer.Stop()
	os.Exit(code)
}

// The grounding check's vectors are sealed the same way: a forged or
// copied vector is a miss, and the text is embedded again.
func TestRedisServesNoForgedVector(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	sealer := sealtest.New(t)
	cache := NewRedis(client, sealer, fmt.Sprintf("t%d:", time.Now().UnixNano()), time.Minute)
	ctx := context.Background()

	cache.Put(ctx, []string{"real"}, [][]float32{{1, 2, 3}})
	stored, err := client.Get(ctx, cache.key("real")).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for k, value := range map[string][]byte{"plain": encodeVector([]float32{9, 9, 9}), "copied": stored} {
		if err := client.Set(ctx, cache.key(k), value, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	got := cache.Get(ctx, []string{"real", "plain", "copied"})
	if len(got[0]) != 3 || got[0][2] != 3 {
		t.Errorf("the route's own vector: %v", got[0])
	}
	if got[1] != nil || got[2] != nil {
		t.Errorf("forged vectors served: %v", got[1:])
	}
	if n := sealer.Rejected(); n != 2 {
		t.Errorf("%d rejected values counted, want 2", n)
	}
}
