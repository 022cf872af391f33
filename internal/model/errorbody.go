package model

import (
	"io"
	"net/http"
	"strings"
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
	if len(head) <= MaxErrorBodyBytes {
		return string(head)
	}
	// A rune cut in two is dropped, so the log line stays valid UTF-8.
	return strings.ToValidUTF8(string(head[:MaxErrorBodyBytes]), "") + truncatedMark
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
