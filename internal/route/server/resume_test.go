package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// A browser's EventSource reconnects with the last event's id after a
// finished turn's stream closes normally. That stream must end at once,
// replaying nothing, on either turn log, not send keep-alives until the
// turn expires.
func TestResumeAtTheEndOfAFinishedTurnEndsTheStream(t *testing.T) {
	servers := map[string]func(*testing.T, *routetest.World) *httptest.Server{
		"memory": func(t *testing.T, w *routetest.World) *httptest.Server { return serve(t, w) },
		"redis": func(t *testing.T, w *routetest.World) *httptest.Server {
			prefix := "t:" + strconv.FormatInt(time.Now().UnixNano(), 10) + ":"
			return newReplica(t, w, routetest.Redis.Get(t).Addr, prefix).srv
		},
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			w := routetest.NewWorld(t)
			w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
			srv := start(t, w)
			turnID := submit(t, srv, "ann", "How are sync waves ordered?")
			resp := do(t, "GET", srv.URL+"/v1/turns/"+turnID+"/events", "ann", "")
			events := readSSE(t, resp.Body, 1000)
			resp.Body.Close()
			if len(events) == 0 || events[len(events)-1].typ != turn.EventTurnCompleted {
				t.Fatalf("stream %+v", events)
			}
			last := events[len(events)-1].id
			for _, after := range []int64{last, last + 3} {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/turns/"+turnID+"/events", nil)
				req.Header.Set("X-User", "ann")
				req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					cancel()
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				cancel()
				if err != nil {
					t.Fatalf("resume after %d (the last event is %d): the stream did not end within 2 s: %v", after, last, err)
				}
				if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "event: ") {
					t.Errorf("resume after %d: %d %q, want 200 and no events", after, resp.StatusCode, body)
				}
			}
		})
	}
}
