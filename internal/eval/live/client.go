package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// The live route's HTTP client: every request as the identity the caller
// was given, each attempt under its own timeout, 429s retried after their
// Retry-After.

// maxRetryWait caps one Retry-After: a route's per-user bucket refills
// within seconds, and a larger value is more likely a misconfigured proxy.
const maxRetryWait = 30 * time.Second

// errorBodyBytes bounds what of an error answer is read for its message.
const errorBodyBytes = 4 << 10

// IdentityRefusedError is a 401 or 403 from the route: the headers or the
// token it was asked with are not an identity it trusts. Values are never
// shown, as they hold the proxy's secret or a token.
type IdentityRefusedError struct {
	Status  int
	Message string
}

func (e *IdentityRefusedError) Error() string {
	return fmt.Sprintf("the route refused the identity (%d %s: %s): check --header, --header-file and --token-file",
		e.Status, http.StatusText(e.Status), e.Message)
}

// staleConfigRetry is how long a request answered by a replica of
// another config waits before it is sent again: the Service's endpoints
// drop a stopping replica within seconds.
const staleConfigRetry = 500 * time.Millisecond

// StaleConfigError is a route whose replicas still answered from another
// config than the one the run measures when the run's wait for it ended.
type StaleConfigError struct {
	Want, Served string
	Waited       time.Duration
}

func (e *StaleConfigError) Error() string {
	return fmt.Sprintf("the route still answers from config %s after %s, and this run measures config %s: the route is rolling, or changed after the run started",
		e.Served, e.Waited.Round(time.Second), e.Want)
}

// routeClient asks one route.
type routeClient struct {
	base    string
	header  http.Header
	http    *http.Client
	timeout time.Duration
	retries int
	// configHash, when set, is the only config whose answers are taken;
	// another's are asked again for up to configWait.
	configHash string
	configWait time.Duration
}

// cancelOnClose ends a response's attempt context when its body closes, so
// that a stream can be read after the request returned.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// do sends one request, retrying a 429 up to c.retries times and an
// answer of another config than c.configHash for up to c.configWait; a
// 2xx answer comes back open (the caller closes it) with the time its
// last attempt took to answer. The attempt's timeout also bounds reading
// the body.
func (c *routeClient) do(ctx context.Context, method, path string, body []byte) (*http.Response, time.Duration, error) {
	var firstStale time.Time
	for attempt := 0; ; {
		var reader io.Reader
		if body != nil {
			reader = bytes.NewReader(body)
		}
		attemptCtx, cancel := context.WithTimeout(ctx, c.timeout)
		req, err := http.NewRequestWithContext(attemptCtx, method, c.base+path, reader)
		if err != nil {
			cancel()
			return nil, 0, fmt.Errorf("%s %s: %w", method, path, err)
		}
		for name, values := range c.header {
			req.Header[name] = values
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := c.http.Do(req)
		elapsed := time.Since(start)
		if err != nil {
			cancel()
			return nil, 0, fmt.Errorf("%s %s: %w", method, path, err)
		}
		var wait time.Duration
		var waitingFor string // what the run ended waiting for, if it does
		if served := c.otherConfig(resp); served != "" {
			resp.Body.Close()
			cancel()
			if firstStale.IsZero() {
				firstStale = start
			}
			if waited := time.Since(firstStale); waited >= c.configWait {
				return nil, 0, &StaleConfigError{Want: c.configHash, Served: served, Waited: waited}
			}
			wait, waitingFor = staleConfigRetry, fmt.Sprintf("answered from config %s, and the run ended waiting for %s", served, c.configHash)
		} else {
			if resp.StatusCode/100 == 2 {
				resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
				return resp, elapsed, nil
			}
			message := errorMessage(resp)
			cancel()
			switch {
			case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
				return nil, 0, &IdentityRefusedError{Status: resp.StatusCode, Message: message}
			case resp.StatusCode != http.StatusTooManyRequests:
				return nil, 0, fmt.Errorf("%s %s: the route answered %d: %s", method, path, resp.StatusCode, message)
			case attempt >= c.retries:
				return nil, 0, fmt.Errorf("%s %s: still rate limited after %d retries: %s", method, path, c.retries, message)
			}
			attempt++
			wait = retryAfter(resp.Header.Get("Retry-After"))
			waitingFor = fmt.Sprintf("rate limited, and the run ended waiting %s to retry", wait)
		}
		select {
		case <-ctx.Done():
			return nil, 0, fmt.Errorf("%s %s: %s: %w", method, path, waitingFor, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// otherConfig is the config an answer names when it is not the one the
// run measures; "" when it is, or when either names none.
func (c *routeClient) otherConfig(resp *http.Response) string {
	served := resp.Header.Get(podconfig.ConfigHashHeader)
	if c.configHash == "" || served == c.configHash {
		return ""
	}
	return served
}

// postJSON posts in as JSON and decodes the answer into out.
func (c *routeClient) postJSON(ctx context.Context, path string, in, out any) (time.Duration, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return 0, fmt.Errorf("encode %s: %w", path, err)
	}
	resp, elapsed, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return 0, fmt.Errorf("POST %s: read the answer: %w", path, err)
	}
	return elapsed, nil
}

// retryAfter reads a Retry-After in seconds (the route sends whole
// seconds); missing or unreadable waits a second.
func retryAfter(value string) time.Duration {
	seconds, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || seconds < 1 {
		return time.Second
	}
	return min(time.Duration(seconds)*time.Second, maxRetryWait)
}

// errorMessage is the message of the route's OpenAI-shaped error answer,
// or the start of whatever else answered (a proxy's page); it closes the
// body.
func errorMessage(resp *http.Response) string {
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
	var shaped struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &shaped); err == nil && shaped.Error.Message != "" {
		if shaped.Error.Code != "" {
			return shaped.Error.Code + ": " + shaped.Error.Message
		}
		return shaped.Error.Message
	}
	if text := strings.TrimSpace(string(data)); text != "" {
		return text
	}
	return "no message"
}

// endsTheRun reports whether err is one every other question would meet
// too, so the run stops: the route refusing the identity, or answering
// from another config than the one the run measures.
func endsTheRun(err error) bool {
	var refused *IdentityRefusedError
	var stale *StaleConfigError
	return errors.As(err, &refused) || errors.As(err, &stale)
}
