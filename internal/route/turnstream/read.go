package turnstream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// MaxEventBytes bounds one line of the stream: a retrieval event lists at
// most the packed fragments' metadata, never their texts.
const MaxEventBytes = 1 << 20

// ErrEndedEarly is returned when the stream ends before the turn's final
// event (turn.completed or error): the connection dropped, and a client
// may resume after the last event's ID with Last-Event-ID.
var ErrEndedEarly = errors.New("the stream ended before turn.completed or error")

// Read reads a turn's events from body, handing each to each as it
// arrives, up to and including the final one. Each event carries its ID
// (what Last-Event-ID resumes after) and its payload decoded as the
// turn emitted it (turn.Decode); a type this reader does not know keeps
// its payload as turn.Unknown. It fails with ErrEndedEarly when the stream ends first,
// when a payload does not decode (naming the event), or when each fails.
func Read(body io.Reader, each func(turn.Event) error) error {
	scanner := bufio.NewScanner(body)
	scanner.Buffer(make([]byte, 64<<10), MaxEventBytes)
	var ev turn.Event
	var data []string
	for scanner.Scan() {
		field, value, _ := strings.Cut(scanner.Text(), ":")
		value = strings.TrimPrefix(value, " ") // the SSE spec strips one space
		switch field {
		case "id":
			id, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return fmt.Errorf("event id %q: %w", value, err)
			}
			ev.ID = id
		case "event":
			ev.Type = value
		case "data":
			data = append(data, value)
		case "": // a blank line ends an event; ":" opens a comment (keep-alive)
			if scanner.Text() != "" || ev.Type == "" {
				continue
			}
			payload, err := turn.Decode(ev.Type, []byte(strings.Join(data, "\n")))
			if err != nil {
				return fmt.Errorf("event %d (%s): %w", ev.ID, ev.Type, err)
			}
			ev.Data = payload
			if err := each(ev); err != nil {
				return err
			}
			if ev.Final() {
				return nil
			}
			ev, data = turn.Event{}, nil
		}
	}
	if err := scanner.Err(); err != nil {
		return fmt.Errorf("read the stream: %w", err)
	}
	return ErrEndedEarly
}
