package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// Server-Sent Events: a turn's event stream and the facade's streamed
// answer.

// sseStream is an open Server-Sent Events stream. Each send must reach the
// client within its write timeout: past it the send fails (and every send
// after it), so a client that stops reading holds no handler, no turn log
// connection and no turn.
type sseStream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// startSSE sends the headers of a Server-Sent Events stream; a connection
// that cannot stream is a 500 *apiError.
func startSSE(w http.ResponseWriter, writeTimeout time.Duration) (*sseStream, error) {
	if _, ok := w.(http.Flusher); !ok {
		return nil, &apiError{Status: http.StatusInternalServerError, Code: "no_streaming", Message: "streaming unsupported"}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store") // one user's answer, as writeJSON's
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if writeTimeout <= 0 {
		writeTimeout = DefaultLimits().StreamWriteTimeout
	}
	s := &sseStream{w: w, rc: http.NewResponseController(w), timeout: writeTimeout}
	return s, s.send(func(io.Writer) {})
}

// send writes with write and flushes it to the client, under the write
// timeout.
func (s *sseStream) send(write func(w io.Writer)) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout)) // a writer without deadlines keeps none
	write(s.w)
	return s.rc.Flush()
}

// writeEvent writes ev as one event of a turn's stream: its id, which a
// client resumes after (none when 0: an event the turn log does not hold,
// such as the log's own failure), its type and its data as JSON.
func writeEvent(w io.Writer, ev turn.Event) {
	if ev.ID != 0 {
		fmt.Fprintf(w, "id: %d\n", ev.ID)
	}
	data, _ := json.Marshal(ev.Data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, data)
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
