package api

import (
	"fmt"
	"net/http"
	"sync"
)

// streams bounds the event streams open at once: per user, so that one
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
			message: fmt.Sprintf("you have %d event streams open, the most one user may (limits.streamsPerUser); close one", n)}
	}
	if s.open >= s.max {
		return nil, &refusal{status: http.StatusServiceUnavailable, code: "overloaded", limit: limitMaxStreams, retryAfter: retrySoon,
			message: fmt.Sprintf("the route has %d event streams open, its limit; retry shortly", s.open)}
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
