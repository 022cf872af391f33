package server

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/time/rate"
)

// admission decides whether a request may start work now. Per user it
// bounds the turns running at once and the turns started per minute (a
// token bucket), so that one user cannot take everyone's capacity; for the
// replica it bounds the turns running at once, all users together. A
// search counts as a turn. The limits hold per replica. Users' verdicts
// (feedback) pass an admission of their own under the same limits: they
// are bounded alike without spending the turns' budget.
type admission struct {
	// noun names what is admitted in a refusal: "turns", "verdicts".
	noun              string
	concurrentPerUser int
	maxInFlight       int
	perUserRate       rate.Limit
	perUserBurst      int
	perMinute         int
	// idleAfter is how long a user's state outlives its last use: by then
	// the bucket is full again, so dropping it forgets nothing.
	idleAfter time.Duration
	now       func() time.Time

	mu        sync.Mutex
	inFlight  int
	users     map[string]*userLoad
	lastSweep time.Time
}

// userLoad is what admission remembers of one user.
type userLoad struct {
	running  int
	bucket   *rate.Limiter
	lastUsed time.Time
}

// refusal says why a request was not admitted, as the client sees it.
type refusal struct {
	status     int
	code       string
	message    string
	retryAfter time.Duration
	// limit names the limit for the refusals metric.
	limit string
}

// The limits a refusal names, as the metric labels them.
const (
	limitConcurrentPerUser = "concurrent_turns_per_user"
	limitRatePerUser       = "turns_per_minute_per_user"
	limitInFlight          = "max_in_flight_turns"
	limitStreamsPerUser    = "streams_per_user"
	limitMaxStreams        = "max_streams"
)

// retrySoon is the Retry-After of a refusal that waits on running turns,
// which no limiter can foresee.
const retrySoon = time.Second

// newAdmission applies limits to what noun names; a limit left at zero
// takes its default.
func newAdmission(noun string, limits Limits, now func() time.Time) *admission {
	def := DefaultLimits()
	concurrent := positiveOr(limits.ConcurrentTurnsPerUser, def.ConcurrentTurnsPerUser)
	perMinute := positiveOr(limits.TurnsPerMinutePerUser, def.TurnsPerMinutePerUser)
	// A user may start at once as many turns as they may run at once,
	// never more than a minute's worth.
	burst := min(concurrent, perMinute)
	refill := time.Duration(float64(burst) / float64(perMinute) * float64(time.Minute))
	return &admission{
		noun:              noun,
		concurrentPerUser: concurrent,
		maxInFlight:       positiveOr(limits.MaxInFlightTurns, def.MaxInFlightTurns),
		perUserRate:       rate.Limit(float64(perMinute) / 60),
		perUserBurst:      burst,
		perMinute:         perMinute,
		idleAfter:         max(refill, time.Minute),
		now:               now,
		users:             map[string]*userLoad{},
		lastSweep:         now(),
	}
}

func positiveOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// admit reserves a slot for one turn of user. On success the caller must
// call release once the turn's work is over.
func (a *admission) admit(user string) (release func(), refused *refusal) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	a.sweep(now)
	u := a.users[user]
	if u == nil {
		u = &userLoad{bucket: rate.NewLimiter(a.perUserRate, a.perUserBurst), lastUsed: now}
		a.users[user] = u
	}
	if u.running >= a.concurrentPerUser {
		return nil, &refusal{status: http.StatusTooManyRequests, code: "rate_limited", limit: limitConcurrentPerUser, retryAfter: retrySoon,
			message: fmt.Sprintf("you have %d %s running, the most one user may run at once (limits.concurrentTurnsPerUser); retry when one finishes", u.running, a.noun)}
	}
	if a.inFlight >= a.maxInFlight {
		return nil, &refusal{status: http.StatusServiceUnavailable, code: "overloaded", limit: limitInFlight, retryAfter: retrySoon,
			message: fmt.Sprintf("the route is running %d %s, its limit (limits.maxInFlightTurns); retry shortly", a.inFlight, a.noun)}
	}
	// The bucket is asked last, so a turn refused for another reason
	// costs the user no token.
	reservation := u.bucket.ReserveN(now, 1)
	if wait := reservation.DelayFrom(now); wait > 0 {
		reservation.CancelAt(now)
		return nil, &refusal{status: http.StatusTooManyRequests, code: "rate_limited", limit: limitRatePerUser, retryAfter: wait,
			message: fmt.Sprintf("over %d %s per minute for one user (limits.turnsPerMinutePerUser); retry in %s s", a.perMinute, a.noun, retryAfterSeconds(wait))}
	}
	u.running++
	a.inFlight++
	u.lastUsed = now
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			u.running--
			a.inFlight--
			u.lastUsed = a.now()
		})
	}, nil
}

// sweep forgets the users idle for idleAfter, at most once per idleAfter,
// so the state kept is bounded by the users active lately.
func (a *admission) sweep(now time.Time) {
	if now.Sub(a.lastSweep) < a.idleAfter {
		return
	}
	a.lastSweep = now
	for user, u := range a.users {
		if u.running == 0 && now.Sub(u.lastUsed) >= a.idleAfter {
			delete(a.users, user)
		}
	}
}

// running is the number of turns admitted and not yet released.
func (a *admission) running() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inFlight
}

// reserve admits one turn (or search) of user, counting a refusal by the
// limit it hit: a 429 or 503 *apiError with Retry-After. On success the
// caller must call release once the work is over.
func (s *Server) reserve(user string) (release func(), err error) {
	return s.refusedAs(s.admission.admit(limitKey(user)))
}

// reserveVerdict admits one of user's verdicts: their own budget, under
// the turns' limits, so rating an answer never costs a turn.
func (s *Server) reserveVerdict(user string) (release func(), err error) {
	return s.refusedAs(s.verdicts.admit(limitKey(user)))
}

// limitKey is whose budget a user's request spends: the name in NFC,
// lower-cased, so that Alice, alice and ALICE (which an identity provider
// may all accept as one login) share one budget instead of tripling it.
// Only the limits fold: ACLs and turn ownership stay byte-exact.
func limitKey(user string) string {
	return strings.ToLower(norm.NFC.String(user))
}

// refusedAs counts a refusal and answers it as an *apiError.
func (s *Server) refusedAs(release func(), refused *refusal) (func(), error) {
	if refused != nil {
		s.metrics.refused.WithLabelValues(refused.limit).Inc()
		return nil, &apiError{Status: refused.status, Code: refused.code, Message: refused.message, RetryAfter: refused.retryAfter}
	}
	return release, nil
}
