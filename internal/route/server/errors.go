package server

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// Errors, after Caddy's HandlerError: an endpoint returns its refusal or
// failure as an *apiError, and this file is the one place that classifies
// an error (failureOf, errorStatus) and writes it, to every surface: an
// HTTP answer in OpenAI's shape, {"error": {"message", "type", "param",
// "code"}} (apiHandler); the same body as the facade's streamed answer's
// last data line; an MCP tool's error result (toolFailed); the error
// event that ends a turn's stream the server broke off (streamEvent).

// apiError is what a client is answered instead of the endpoint's answer.
type apiError struct {
	Status int
	// Code is what a client acts on: the route's codes (route/errors.go)
	// or the API's own (bad_json, rate_limited, …).
	Code string
	// Param is the request field at fault; "" answers null.
	Param string
	// Message is what the client reads. It never quotes an upstream's or
	// a store's error, which names internal addresses: that is Err.
	Message string
	// RetryAfter, when positive, is sent as Retry-After in whole seconds.
	RetryAfter time.Duration
	// Header is sent with the answer (X-Should-Retry, Connection).
	Header http.Header
	// Err is the failure behind the answer, for the log only.
	Err error
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *apiError) Unwrap() error { return e.Err }

// errorBody is OpenAI's error shape. The fields are in the order the API
// has always written them.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"` // null when no field is at fault
	Type    string  `json:"type"`
}

// body is e in OpenAI's shape.
func (e *apiError) body() errorBody {
	obj := errorObject{Code: e.Code, Message: e.Message, Type: errorType(e.Status)}
	if e.Param != "" {
		obj.Param = &e.Param
	}
	return errorBody{Error: obj}
}

// write answers e: its headers, its status, its body.
func (e *apiError) write(w http.ResponseWriter) {
	for name, values := range e.Header {
		for _, v := range values {
			w.Header().Add(name, v)
		}
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfterSeconds(e.RetryAfter))
	}
	writeJSON(w, e.Status, e.body())
}

// apiHandler adapts an endpoint that returns its error to http.Handler: the
// one place an error answer is written. An endpoint returns an error only
// before it writes anything; once a stream has started, its failures go in
// the stream.
type apiHandler struct {
	serve  func(http.ResponseWriter, *http.Request) error
	logger *slog.Logger
}

// endpoint adapts serve with the server's logger.
func (s *Server) endpoint(serve func(http.ResponseWriter, *http.Request) error) apiHandler {
	return apiHandler{serve: serve, logger: s.opts.Logger}
}

func (h apiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	err := h.serve(w, r)
	if err == nil {
		return
	}
	answer := failureOf(err)
	if answer.Err != nil && h.logger != nil {
		h.logger.Error("request failed", "path", r.URL.Path, "request_id", w.Header().Get(requestIDHeader),
			"code", answer.Code, "error", answer.Err)
	}
	answer.write(w)
}

// toolFailed is an MCP tool's error result, which the agent's model
// reads: the code and the message, as the HTTP API answers them, never
// the error behind them (logged), which names internal addresses.
func (s *Server) toolFailed(tool string, err error) *mcp.CallToolResult {
	answer := failureOf(err)
	if answer.Err != nil && s.opts.Logger != nil {
		s.opts.Logger.Error("MCP tool call failed", "tool", tool, "code", answer.Code, "error", answer.Err)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: answer.Code + ": " + answer.Message}}}
}

// streamEvent is e as the error event that ends a turn's stream the
// server broke off (the turn log failed): the turn's own error event's
// payload, retryable, as the client may reconnect with Last-Event-ID.
// It has no id: the turn log does not hold it.
func (e *apiError) streamEvent() turn.Event {
	return turn.NewEvent(turn.Failed{Code: e.Code, Message: e.Message, Retryable: true})
}

// failureOf is what a client is answered for err: the *apiError in it,
// else a bug's 500, which does not quote err (its text may name internal
// addresses).
func failureOf(err error) *apiError {
	var answer *apiError
	if !errors.As(err, &answer) {
		answer = &apiError{Status: http.StatusInternalServerError, Code: turn.CodeInternal, Message: "the request failed", Err: err}
	}
	return answer
}

// errorType is OpenAI's error type for a status; SDKs pick their
// exception class from the status, some UIs show the type.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// failed is the answer to a turn or a search that failed with one of the
// route's codes, under that code's status: an OpenAI SDK retries 429 and
// 5xx with backoff.
func failed(code, message string) *apiError {
	return &apiError{Status: errorStatus(code), Code: code, Message: message}
}

// turnFailed is the answer to a turn that ended with its error event.
func turnFailed(f turn.Failed) *apiError { return failed(f.Code, f.Message) }

// errorStatus is the HTTP status of a route's error code.
func errorStatus(code string) int {
	switch code {
	case turn.CodeRateLimited:
		return http.StatusTooManyRequests
	case turn.CodeModelTimeout, turn.CodeTimeout:
		return http.StatusGatewayTimeout
	case turn.CodeCancelled, turn.CodeEmbedderMismatch, turn.CodeAnalyzerMismatch:
		return http.StatusServiceUnavailable
	case turn.CodeInternal:
		return http.StatusInternalServerError
	default:
		return http.StatusBadGateway
	}
}

// withRetryAdvice tells an OpenAI SDK, which retries 429 and 5xx on its
// own and would replay the whole turn, whether a retry can help: after a
// rate limit or an unavailable dependency, in a few seconds; after a model
// error, a timeout or an index of another embedder or analyzer (which
// waits for an ingestion), not at all (X-Should-Retry, read by OpenAI's
// SDKs).
func (e *apiError) withRetryAdvice() *apiError {
	switch e.Code {
	case turn.CodeRateLimited, turn.CodeModelUnavailable, turn.CodeKnowledgeUnavailable, turn.CodeCancelled:
		e.RetryAfter = retryUpstream
	default:
		e.Header = http.Header{"X-Should-Retry": {"false"}}
	}
	return e
}

// retryUpstream is the Retry-After after an upstream failed: the route's
// own retries already waited for it.
const retryUpstream = 5 * time.Second

// retryAfterSeconds is a Retry-After value: whole seconds, rounded up, at
// least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(max(int64(math.Ceil(d.Seconds())), 1), 10)
}
