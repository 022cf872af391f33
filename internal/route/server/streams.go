package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
)

// streams bounds the long-lived responses open at once, of every surface:
// a turn's event stream, a streamed completion, an MCP request (each an
// event stream that lasts as long as its call). Per user, so that one
// user's client reconnecting in a loop cannot take every stream of the
// replica (and every connection of the turn log's wait pool), and for the
// replica.
type streams struct {
	perUser, max int

	mu    sync.Mutex
	open  int
	users map[string]int
}

func newStreams(limits Limits) *streams {
	def := DefaultLimits()
	return &streams{perUser: positiveOr(limits.StreamsPerUser, def.StreamsPerUser), max: positiveOr(limits.MaxStreams, def.MaxStreams),
		users: map[string]int{}}
}

// admit reserves a stream of user; release gives it back, once.
func (s *streams) admit(user string) (release func(), refused *refusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.users[user]; n >= s.perUser {
		return nil, &refusal{status: http.StatusTooManyRequests, code: "too_many_streams", limit: limitStreamsPerUser, retryAfter: retrySoon,
			message: fmt.Sprintf("you have %d streams open, the most one user may (limits.streamsPerUser); close one", n)}
	}
	if s.open >= s.max {
		return nil, &refusal{status: http.StatusServiceUnavailable, code: "overloaded", limit: limitMaxStreams, retryAfter: retrySoon,
			message: fmt.Sprintf("the route has %d streams open, its limit (limits.maxStreams); retry shortly", s.open)}
	}
	s.users[user]++
	s.open++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.open--
			if s.users[user]--; s.users[user] == 0 {
				delete(s.users, user)
			}
		})
	}, nil
}

// openStream reserves one of user's streams (refused past either limit as
// a 429 or 503 *apiError with Retry-After) and gives the context the
// response runs under: it ends when ctx does, or when the route's drain
// does (New's ctx), so that no response outlives the drain and holds up
// the pod's shutdown. On success the caller must call done once the
// response is over.
func (s *Server) openStream(ctx context.Context, user string) (streamCtx context.Context, done func(), err error) {
	release, err := s.refusedAs(s.streams.admit(limitKey(user)))
	if err != nil {
		return nil, nil, err
	}
	streamCtx, cancel := context.WithCancel(ctx)
	stopOnDrain := context.AfterFunc(s.turns, cancel)
	return streamCtx, func() {
		stopOnDrain()
		cancel()
		release()
	}, nil
}
