package model

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// RetryPolicy says how a call to a model server (the chat model, the
// embedder, the cross-encoder) is retried when the server answers 429 or
// 503, or the connection is refused or reset before an answer: a hosted
// API's rate limit or a restarting server should not fail a turn or an
// ingestion run. Waits back off exponentially with full jitter, honour a
// Retry-After the server sends (capped), and never run past the caller's
// deadline: a wait that would is not started, and the last answer stands.
// The zero value is DefaultRetryPolicy.
type RetryPolicy struct {
	// MaxRetries is how many times a call is retried after the first
	// attempt; 0: 3. Negative: never.
	MaxRetries int
	// BaseDelay is the cap of the first backoff; it doubles per retry.
	// 0: 250ms.
	BaseDelay time.Duration
	// MaxDelay caps one backoff wait; 0: 4s.
	MaxDelay time.Duration
	// MaxRetryAfter caps a wait the server asks for in Retry-After; 0: 20s.
	MaxRetryAfter time.Duration
	// MaxTotalWait bounds the waits of one call together; 0: 30s.
	MaxTotalWait time.Duration

	// For tests: Sleep waits d or until ctx is done (default: a timer);
	// Now reads the clock for Retry-After dates and deadlines (default:
	// time.Now); Jitter picks a wait in [0, ceiling] (default: uniform).
	Sleep  func(ctx context.Context, d time.Duration) error
	Now    func() time.Time
	Jitter func(ceiling time.Duration) time.Duration
}

// DefaultRetryPolicy is the policy of the model clients: at most 3
// retries, backoff of up to 250ms, 500ms, 1s (full jitter, each capped at
// 4s), a Retry-After capped at 20s, and at most 30s of waiting per call.
var DefaultRetryPolicy = RetryPolicy{}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxRetries == 0 {
		p.MaxRetries = 3
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 250 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 4 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 20 * time.Second
	}
	if p.MaxTotalWait <= 0 {
		p.MaxTotalWait = 30 * time.Second
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Jitter == nil {
		p.Jitter = func(ceiling time.Duration) time.Duration { return rand.N(ceiling + 1) }
	}
	return p
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// retryHookKey marks a context whose call wants to hear each wait before
// it starts (the chat stream holds its idle timer back meanwhile).
type retryHookKey struct{}

func withRetryHook(ctx context.Context, hook func(wait time.Duration)) context.Context {
	return context.WithValue(ctx, retryHookKey{}, hook)
}

// Do runs attempt until it answers something other than 429 or 503 or a
// refused or reset connection, or the policy's bound is reached; it then
// returns that answer as is, so the last status surfaces to the caller.
// Each retry is counted in retries (may be nil). The bodies of answers
// that are retried are drained and closed. attempt must be safe to call
// again (a request body is replayed by the caller).
func (p RetryPolicy) Do(ctx context.Context, retries *atomic.Int64, attempt func() (*http.Response, error)) (*http.Response, error) {
	p = p.withDefaults()
	var waited time.Duration
	for n := 0; ; n++ {
		resp, err := attempt()
		if n >= p.MaxRetries || ctx.Err() != nil || !retryable(resp, err) {
			return resp, err
		}
		wait := p.Jitter(min(p.MaxDelay, p.BaseDelay<<n))
		if after, ok := retryAfter(resp, p.Now()); ok {
			wait = min(after, p.MaxRetryAfter)
		}
		if waited+wait > p.MaxTotalWait {
			return resp, err
		}
		if deadline, ok := ctx.Deadline(); ok && p.Now().Add(wait).After(deadline) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		if hook, ok := ctx.Value(retryHookKey{}).(func(time.Duration)); ok {
			hook(wait)
		}
		if retries != nil {
			retries.Add(1)
		}
		if err := p.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		waited += wait
	}
}

// retryable: 429, 503, or a connection refused or reset before an answer.
func retryable(resp *http.Response, err error) bool {
	if err != nil {
		return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
}

// retryAfter reads Retry-After: delay seconds or an HTTP date.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(secs, 0)) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// Transport returns a RoundTripper that retries base's round trips by the
// policy, replaying the request body; the counter, if set, counts retries.
// A response is returned once its status is final, so a streamed body is
// never replayed after any of it reached the caller; a final error
// answer's body is cut to its prefix (capErrorBody). base nil:
// http.DefaultTransport. The call is traced (traced).
func (p RetryPolicy) Transport(base http.RoundTripper, retries *atomic.Int64) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return traced(&retryTransport{policy: p, base: base, retries: retries})
}

type retryTransport struct {
	policy  RetryPolicy
	base    http.RoundTripper
	retries *atomic.Int64
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	getBody := req.GetBody
	if req.Body != nil && req.Body != http.NoBody && getBody == nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		getBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	first := true
	resp, err := t.policy.Do(req.Context(), t.retries, func() (*http.Response, error) {
		r := req
		if !first || req.GetBody == nil {
			r = req.Clone(req.Context())
			if getBody != nil {
				body, err := getBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		first = false
		return t.base.RoundTrip(r)
	})
	capErrorBody(resp)
	return resp, err
}

// StatusOf is the HTTP status a failed model call was answered with, or
// 0 when it got none (a refused connection, a timeout).
func StatusOf(err error) int {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode
	}
	return 0
}
