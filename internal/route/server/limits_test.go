package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/testenv"
)

// serveLimited serves the world's route over loopback HTTP with proxy
// identity headers, its limits changed by set (nil: the defaults).
func serveLimited(t testing.TB, w *routetest.World, set func(*Limits)) *httptest.Server {
	t.Helper()
	return serveWith(t, w, func(o *Options) {
		if set != nil {
			set(&o.Limits)
		}
	})
}

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	at time.Time
}

func newTestClock() *testClock { return &testClock{at: time.Now()} }

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// serveWith serves w's route with the default limits (keep-alives every
// 200 ms) and a memory turn log, after set changes what a test needs.
func serveWith(t testing.TB, w *routetest.World, set func(*Options)) *httptest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts := Options{
		Engine: w.Engine, Searcher: w.Searcher, Log: turnlog.NewMemory(time.Minute, 100, 0, time.Now),
		Auth: identity.ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}, Limits: DefaultLimits(),
		Ready: func(context.Context) error { return nil },
	}
	opts.Limits.KeepAlive = 200 * time.Millisecond
	set(&opts)
	srv := httptest.NewServer(New(ctx, opts).Handler())
	t.Cleanup(srv.Close)
	return srv
}

// holdAnswers makes the world's model wait until the returned function is
// called (or the test ends), so that turns stay running.
func holdAnswers(t *testing.T, w *routetest.World) (letGo func()) {
	gate := make(chan struct{})
	var once sync.Once
	letGo = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(letGo) // before the model server closes: it waits for its handlers
	w.Models.Chat = func(testenv.ChatRequest) testenv.ChatReply {
		<-gate
		return testenv.ChatReply{Content: "Lower waves go first."}
	}
	return letGo
}

// post sends a JSON body as user and returns the status, the Retry-After
// header and the API error, if any.
func post(t *testing.T, srv *httptest.Server, path, user, body string) (status int, retryAfter string, apiErr struct{ Code, Message string }) {
	t.Helper()
	resp := do(t, "POST", srv.URL+path, user, body)
	defer resp.Body.Close()
	var out struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, resp.Header.Get("Retry-After"), out.Error
}

const (
	turnBody       = `{"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`
	completionBody = `{"model":"support","messages":[{"role":"user","content":"How are sync waves ordered?"}]}`
	searchBody     = `{"query":"sync waves"}`
)

// finish reads a turn's stream to its end.
func finish(t *testing.T, srv *httptest.Server, user, turnID string) {
	t.Helper()
	resp := do(t, "GET", srv.URL+"/v1/turns/"+turnID+"/events", user, "")
	events := readSSE(t, resp.Body, 1000)
	resp.Body.Close()
	if len(events) == 0 || events[len(events)-1].typ != turn.EventTurnCompleted {
		t.Fatalf("turn %s ended with %+v", turnID, events)
	}
}

// One user flooding the route is told to slow down, with a Retry-After
// from the bucket, on every endpoint that starts work; another user is
// still served.
func TestOneUserFloodingIsRateLimitedAndOthersAreServed(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	srv := serveLimited(t, w, func(l *Limits) { l.TurnsPerMinutePerUser, l.ConcurrentTurnsPerUser = 2, 10 })

	for i := 0; i < 2; i++ {
		if status, _, apiErr := post(t, srv, "/v1/turns", "ann", turnBody); status != http.StatusAccepted {
			t.Fatalf("ann's turn %d within her rate: %d %+v", i+1, status, apiErr)
		}
	}
	for _, path := range []string{"/v1/turns", "/v1/chat/completions", "/v1/search"} {
		body := map[string]string{"/v1/turns": turnBody, "/v1/chat/completions": completionBody, "/v1/search": searchBody}[path]
		status, retryAfter, apiErr := post(t, srv, path, "ann", body)
		seconds, err := strconv.Atoi(retryAfter)
		if status != http.StatusTooManyRequests || apiErr.Code != "rate_limited" || !strings.Contains(apiErr.Message, "turns per minute") {
			t.Errorf("ann flooding %s: %d %+v, want 429 rate_limited naming the per-minute limit", path, status, apiErr)
		}
		// Two a minute: the next token is about 30 s away.
		if err != nil || seconds < 1 || seconds > 30 {
			t.Errorf("ann flooding %s: Retry-After %q, want 1 to 30 seconds", path, retryAfter)
		}
	}

	turnID := submit(t, srv, "bob", "How are sync waves ordered?")
	finish(t, srv, "bob", turnID)
	if status, _, apiErr := post(t, srv, "/v1/search", "bob", searchBody); status != http.StatusOK {
		t.Errorf("bob's search while ann floods: %d %+v", status, apiErr)
	}
}

// A user may run only so many turns at once; a finished turn gives its
// slot back, and other users are not affected.
func TestConcurrentTurnsPerUser(t *testing.T) {
	w := routetest.NewWorld(t)
	letGo := holdAnswers(t, w)
	// The rate's clock is the test's: two turns and a third within the
	// millisecond the bucket takes to refill at 60,000 a minute are over
	// the rate, rightly; this test is about the concurrency limit.
	clock := newTestClock()
	srv := serveWith(t, w, func(o *Options) {
		o.Limits.ConcurrentTurnsPerUser, o.Limits.TurnsPerMinutePerUser = 2, 60000
		o.Now = clock.now
	})

	turns := []string{submit(t, srv, "ann", "first?"), submit(t, srv, "ann", "second?")}
	status, retryAfter, apiErr := post(t, srv, "/v1/turns", "ann", turnBody)
	if status != http.StatusTooManyRequests || apiErr.Code != "rate_limited" || !strings.Contains(apiErr.Message, "at once") || retryAfter == "" {
		t.Errorf("ann's third turn while two run: %d Retry-After %q %+v, want 429 naming the concurrency limit", status, retryAfter, apiErr)
	}
	if status, _, apiErr := post(t, srv, "/v1/chat/completions", "ann", completionBody); status != http.StatusTooManyRequests {
		t.Errorf("ann's completion while two turns run: %d %+v, want 429", status, apiErr)
	}
	bobs := submit(t, srv, "bob", "bob's question?")

	letGo()
	for _, turnID := range turns {
		finish(t, srv, "ann", turnID)
	}
	finish(t, srv, "bob", bobs)
	// The finished turns gave their slots back by the time their streams ended.
	clock.advance(time.Second)
	if status, _, apiErr := post(t, srv, "/v1/turns", "ann", turnBody); status != http.StatusAccepted {
		t.Errorf("ann's turn after hers finished: %d %+v", status, apiErr)
	}
}

// The replica runs at most MaxInFlightTurns turns, all users together;
// past that a new turn is 503 overloaded with a Retry-After.
func TestGlobalInFlightLimit(t *testing.T) {
	w := routetest.NewWorld(t)
	letGo := holdAnswers(t, w)
	srv := serveLimited(t, w, func(l *Limits) { l.MaxInFlightTurns = 2 })

	turns := map[string]string{"ann": submit(t, srv, "ann", "ann's?"), "bob": submit(t, srv, "bob", "bob's?")}
	for _, path := range []string{"/v1/turns", "/v1/chat/completions"} {
		body := map[string]string{"/v1/turns": turnBody, "/v1/chat/completions": completionBody}[path]
		status, retryAfter, apiErr := post(t, srv, path, "carol", body)
		if status != http.StatusServiceUnavailable || apiErr.Code != "overloaded" || !strings.Contains(apiErr.Message, "maxInFlightTurns") || retryAfter == "" {
			t.Errorf("carol's %s with 2 of 2 turns running: %d Retry-After %q %+v, want 503 overloaded", path, status, retryAfter, apiErr)
		}
	}
	letGo()
	for user, turnID := range turns {
		finish(t, srv, user, turnID)
	}
	if status, _, apiErr := post(t, srv, "/v1/turns", "carol", turnBody); status != http.StatusAccepted {
		t.Errorf("carol's turn once the others finished: %d %+v", status, apiErr)
	}
}

// A body that trickles in slower than BodyReadTimeout is cut with 408, so a
// slow client cannot hold a handler; the deadline ends with the body, so
// an answer that takes longer than it is not cut.
func TestSlowBodyIsCut(t *testing.T) {
	w := routetest.NewWorld(t)
	letGo := holdAnswers(t, w)
	srv := serveLimited(t, w, func(l *Limits) { l.BodyReadTimeout = 300 * time.Millisecond })

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/turns HTTP/1.1\r\nHost: route\r\nX-User: ann\r\nX-Groups: staff\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(turnBody))
	stop := make(chan struct{})
	defer close(stop)
	go func() { // one byte every 50 ms: the whole body would take seconds
		for i := 0; i < len(turnBody); i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{turnBody[i]}); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // detects a hang only
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a trickling body: %v", err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(data), "body_timeout") {
		t.Errorf("trickling body: %d %s, want 408 body_timeout", resp.StatusCode, data)
	}

	// A completion whose answer comes after the body timeout still ends well.
	go func() {
		time.Sleep(900 * time.Millisecond) // three body timeouts
		letGo()
	}()
	if status, _, apiErr := post(t, srv, "/v1/chat/completions", "ann", completionBody); status != http.StatusOK {
		t.Errorf("completion answered after the body timeout: %d %+v", status, apiErr)
	}
}

// A user's state is forgotten once idle long enough for the bucket to be
// full again, so a route seeing many users over time does not grow.
func TestIdleUsersAreForgotten(t *testing.T) {
	now := time.Unix(0, 0)
	a := newAdmission("turns", Limits{ConcurrentTurnsPerUser: 4, TurnsPerMinutePerUser: 30}, func() time.Time { return now })
	for i := 0; i < 1000; i++ {
		release, refused := a.admit(fmt.Sprintf("user-%d", i))
		if refused != nil {
			t.Fatalf("user-%d: %+v", i, refused)
		}
		release()
	}
	busy, _ := a.admit("busy") // still running: must be kept
	now = now.Add(2 * time.Minute)
	release, refused := a.admit("late")
	if refused != nil {
		t.Fatal(refused)
	}
	release()
	a.mu.Lock()
	kept := len(a.users)
	_, busyKept := a.users["busy"]
	a.mu.Unlock()
	if kept != 2 || !busyKept {
		t.Errorf("%d users kept after 1,000 went idle, busy kept %v: want the running one and the new one", kept, busyKept)
	}
	busy()
}

// One user's event streams are bounded: 200 streams of her own turn open
// at once get her limit and 429 for the rest, and another user's stream
// still opens; the streams given back, she may open them again.
func TestEventStreamsPerUserAreBounded(t *testing.T) {
	w := routetest.NewWorld(t)
	letGo := holdAnswers(t, w)
	srv := serveLimited(t, w, func(l *Limits) { l.StreamsPerUser = 16 })
	turnID := submit(t, srv, "ann", "first?")
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0}}
	open := func(user, turnID string) (*http.Response, error) {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/turns/"+turnID+"/events", nil)
		req.Header.Set("X-User", user)
		return client.Do(req)
	}
	var mu sync.Mutex
	statuses := map[int]int{}
	var held []*http.Response
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := open("ann", turnID)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			statuses[resp.StatusCode]++
			if resp.StatusCode == http.StatusOK {
				held = append(held, resp) // open until the turn ends
			} else {
				if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
					t.Error("a refused stream without Retry-After")
				}
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if statuses[http.StatusOK] != 16 || statuses[http.StatusTooManyRequests] != 184 {
		t.Errorf("statuses %v: want 16 streams open and 184 refused", statuses)
	}
	bobs := submit(t, srv, "bob", "bob's?")
	if resp, err := open("bob", bobs); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("bob's stream beside ann's: %v %v", resp, err)
	} else {
		defer resp.Body.Close()
	}
	letGo()
	for _, resp := range held {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	finish(t, srv, "ann", turnID) // her streams given back, one opens again
}

// An identity provider may accept Alice, alice and ALICE as one login:
// they share one budget of turns and of streams, as do a name's NFC and
// NFD spellings, while each name still owns only its own turns (ACLs and
// ownership stay byte-exact).
func TestUserLimitsFoldTheCaseOfTheName(t *testing.T) {
	w := routetest.NewWorld(t)
	letGo := holdAnswers(t, w)
	clock := newTestClock()
	srv := serveWith(t, w, func(o *Options) {
		o.Limits.ConcurrentTurnsPerUser, o.Limits.TurnsPerMinutePerUser, o.Limits.StreamsPerUser = 2, 60000, 2
		o.Now = clock.now
	})
	lower, title := submit(t, srv, "alice", "first?"), submit(t, srv, "Alice", "second?")
	zoe := submit(t, srv, "zo\u00eb", "first?") // NFC ë
	submit(t, srv, "ZOE\u0308", "second?")      // NFD Ë
	for _, user := range []string{"ALICE", "Zo\u00eb"} {
		if status, _, apiErr := post(t, srv, "/v1/turns", user, turnBody); status != http.StatusTooManyRequests || apiErr.Code != "rate_limited" {
			t.Errorf("%s's third turn of the same name: %d %+v, want 429", user, status, apiErr)
		}
	}
	if status, _, apiErr := post(t, srv, "/v1/turns", "alicia", turnBody); status != http.StatusAccepted {
		t.Errorf("another user's turn: %d %+v", status, apiErr)
	}
	for _, other := range []struct{ user, turnID string }{{"Alice", lower}, {"ZO\u00cb", zoe}} {
		resp := do(t, "GET", srv.URL+"/v1/turns/"+other.turnID+"/events", other.user, "")
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s read a turn of another spelling: %d, want 404", other.user, resp.StatusCode)
		}
	}

	var held []*http.Response
	for _, stream := range []struct{ user, turnID string }{{"alice", lower}, {"Alice", title}} {
		resp := do(t, "GET", srv.URL+"/v1/turns/"+stream.turnID+"/events", stream.user, "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s's stream: %d", stream.user, resp.StatusCode)
		}
		held = append(held, resp)
	}
	if resp := do(t, "GET", srv.URL+"/v1/turns/"+title+"/events", "Alice", ""); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a third stream of alice and Alice: %d, want 429", resp.StatusCode)
		resp.Body.Close()
	}
	letGo()
	for _, resp := range held {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// stalledWriter is a response whose client stopped reading: a flush waits
// for its write deadline.
type stalledWriter struct {
	http.ResponseWriter
	deadline time.Time
}

func (s *stalledWriter) SetWriteDeadline(d time.Time) error { s.deadline = d; return nil }

func (s *stalledWriter) FlushError() error {
	time.Sleep(time.Until(s.deadline))
	return os.ErrDeadlineExceeded
}

func (s *stalledWriter) Flush() { _ = s.FlushError() }

// A stream to a client that stops reading fails at its write timeout,
// instead of holding its handler (and its turn log connection) for good.
func TestStreamToAClientThatStopsReadingEnds(t *testing.T) {
	w := &stalledWriter{ResponseWriter: httptest.NewRecorder()}
	start := time.Now()
	stream, err := startSSE(w, 50*time.Millisecond)
	if err == nil {
		err = stream.send(func(w io.Writer) { _, _ = io.WriteString(w, ": keep-alive\n\n") })
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("send to a stalled client: %v, want its deadline exceeded", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the stalled send took %s", took)
	}
}
