package model

import (
	"errors"
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// ErrorKind says why a chat call failed, in terms a route can report to
// its client without quoting the upstream error.
type ErrorKind string

// Kinds of chat failures.
const (
	// ErrUnavailable: the server could not be reached (connection refused,
	// DNS, reset), answered 5xx, or broke off the stream.
	ErrUnavailable ErrorKind = "unavailable"
	// ErrTimeout: no delta for the idle timeout, or the call's own
	// deadline passed.
	ErrTimeout ErrorKind = "timeout"
	// ErrRateLimited: the server answered 429.
	ErrRateLimited ErrorKind = "rate_limited"
	// ErrRefused: the server answered another 4xx (a bad API key, an
	// unknown model, a prompt over its context): the route's config or the
	// request, not an outage.
	ErrRefused ErrorKind = "refused"
	// ErrInvalidReply: the server's reply broke the client's bounds (past
	// MaxReplyBytes, a tool-call index past MaxToolCalls): a server that
	// ignores max_tokens, not an outage.
	ErrInvalidReply ErrorKind = "invalid_reply"
)

// Error is a failed chat call. Err is the full error, endpoint included,
// for the log; Kind is what a client may be told.
type Error struct {
	Kind ErrorKind
	Err  error
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// kindOf classifies a failed request or stream by the HTTP status the
// server answered, if any.
func kindOf(err error) ErrorKind {
	var status int
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	switch {
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status >= 400 && status < 500:
		return ErrRefused
	default:
		// No status (connection refused, a broken stream, an error event in
		// the stream) or 5xx: the model cannot answer now.
		return ErrUnavailable
	}
}
