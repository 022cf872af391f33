package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// Someone who reaches the route's Redis copies bob's sealed owner onto
// ann's turn: bob is not shown ann's turn (it is not found, for ann too),
// and the value that did not open is counted in
// ragroute_redis_rejected_values_total.
func TestTurnWithARewrittenOwnerIsNotShownToTheOtherUser(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: routetest.Redis.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	prefix := fmt.Sprintf("forgery%d:", time.Now().UnixNano())
	sealer := sealtest.New(t)
	srv := serveWith(t, w, func(o *Options) {
		o.Log, o.RedisRejected = turnlog.NewRedis(client, sealer, prefix, time.Minute), sealer.Rejected
	})

	anns, bobs := submit(t, srv, "ann", "How are sync waves ordered?"), submit(t, srv, "bob", "How are sync waves ordered?")
	meta := func(turn string) string { return prefix + "turn:" + turn + ":meta" }
	ctx := context.Background()
	bobsOwner, err := client.HGet(ctx, meta(bobs), "owner").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := client.HSet(ctx, meta(anns), "owner", bobsOwner).Err(); err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"bob", "ann"} {
		resp := do(t, "GET", srv.URL+"/v1/turns/"+anns+"/events", user, "")
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s read ann's rewritten turn: %d, want 404", user, resp.StatusCode)
		}
	}
	waitForMetric(t, srv.URL, "ragroute_redis_rejected_values_total 2")
}
