package server

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

// The error event that ends a stream whose turn log failed is the turn's
// own error payload, retryable, byte for byte as the route wrote it by
// hand before, and without the store's error text.
func TestTurnLogUnavailableEventBytes(t *testing.T) {
	rec := httptest.NewRecorder()
	stream, err := startSSE(rec, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	(&Server{}).streamTurnLogUnavailable(stream, "t1", errors.New("dial tcp 10.0.0.7:6379: connection refused"))
	want := fmt.Sprintf("event: error\ndata: {\"code\":%q,\"message\":%q,\"retryable\":true}\n\n", codeTurnLogUnavailable,
		"the turn log is unavailable; reconnect with Last-Event-ID to resume")
	if got := rec.Body.String(); got != want {
		t.Errorf("the event:\n%q\nwant\n%q", got, want)
	}
}
