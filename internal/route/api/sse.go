package api

import (
	"net/http"
	"time"
)

// Server-Sent Events: a turn's event stream and the facade's streamed
// answer.

// startSSE sends the headers of a Server-Sent Events stream; a connection
// that cannot stream is a 500 *apiError.
func startSSE(w http.ResponseWriter) (http.Flusher, error) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		return nil, &apiError{Status: http.StatusInternalServerError, Code: "no_streaming", Message: "streaming unsupported"}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	return flusher, nil
}

// idleTicker ticks every interval since it was last reset; a zero
// interval never ticks. It paces a stream's keep-alive comments.
type idleTicker struct {
	c        <-chan time.Time
	ticker   *time.Ticker
	interval time.Duration
}

func newIdleTicker(interval time.Duration) *idleTicker {
	if interval <= 0 {
		return &idleTicker{} // a nil channel: never ready
	}
	t := time.NewTicker(interval)
	return &idleTicker{c: t.C, ticker: t, interval: interval}
}

func (t *idleTicker) reset() {
	if t.ticker != nil {
		t.ticker.Reset(t.interval)
	}
}

func (t *idleTicker) stop() {
	if t.ticker != nil {
		t.ticker.Stop()
	}
}
