package model

import (
	"errors"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// MaxErrorBodyBytes is how much of an upstream's error answer the route
// keeps, and so logs: enough for the upstream's reason, too little to
// carry the prompt or the fragments some servers echo back in it.
const MaxErrorBodyBytes = 256

// truncatedMark ends an error body that was cut.
const truncatedMark = " … (truncated)"

// ErrorBodyPrefix reads at most MaxErrorBodyBytes of an error answer's
// body, marked when there was more; the rest is left unread.
func ErrorBodyPrefix(body io.Reader) string {
	head, _ := io.ReadAll(io.LimitReader(body, MaxErrorBodyBytes+1))
	return cutToPrefix(string(head))
}

// cutToPrefix is text, or its first MaxErrorBodyBytes marked as cut.
func cutToPrefix(text string) string {
	if len(text) <= MaxErrorBodyBytes {
		return text
	}
	// A rune cut in two is dropped, so the log line stays valid UTF-8.
	return strings.ToValidUTF8(text[:MaxErrorBodyBytes], "") + truncatedMark
}

// capErrorEvent cuts the message of an error event a server sent inside
// a 200 stream as capErrorBody cuts an error answer's body: such a
// message may echo the prompt as well. The OpenAI client returns the
// event as an *openai.APIError behind a wrapper whose text is already
// formatted, so the cut error replaces the whole.
func capErrorEvent(err error) error {
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || len(apiErr.Message) <= MaxErrorBodyBytes {
		return err
	}
	cut := *apiErr
	cut.Message = cutToPrefix(apiErr.Message)
	return &cut
}

// capErrorBody replaces the body of a 4xx or 5xx answer with its prefix
// (ErrorBodyPrefix) before the OpenAI client reads it whole into the
// error it returns: the one place a model server's error body is read.
func capErrorBody(resp *http.Response) {
	if resp == nil || resp.StatusCode < http.StatusBadRequest {
		return
	}
	original := resp.Body
	resp.Body = io.NopCloser(strings.NewReader(ErrorBodyPrefix(original)))
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	original.Close() // not drained: an error answer may be large or still arriving
}
