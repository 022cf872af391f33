package turnstream

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ragroute/ragroute/internal/route/answer"
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
// Runner emitted it; a type this reader does not know keeps its payload as
// json.RawMessage. It fails with ErrEndedEarly when the stream ends first,
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
			payload, err := Decode(ev.Type, []byte(strings.Join(data, "\n")))
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

// Decode decodes an event's payload into its type; a type this reader
// does not know keeps it as json.RawMessage.
func Decode(typ string, data []byte) (any, error) {
	switch typ {
	case turn.EventTurnStarted:
		return decodeAs[turn.Started](data)
	case turn.EventToolCall:
		return decodeAs[turn.ToolCall](data)
	case turn.EventResearch:
		return decodeAs[turn.Research](data)
	case turn.EventAnswerability:
		return decodeAs[turn.AnswerabilityReport](data)
	case turn.EventRetrieval:
		return decodeAs[turn.RetrievalReport](data)
	case turn.EventDelta:
		return decodeAs[turn.Delta](data)
	case turn.EventCitation:
		return decodeAs[turn.Citation](data)
	case turn.EventGrounding:
		return decodeAs[answer.Grounding](data)
	case turn.EventAnswerReplaced:
		return decodeAs[turn.AnswerReplaced](data)
	case turn.EventRoundStarted:
		return decodeAs[turn.RoundStarted](data)
	case turn.EventMemorySaved:
		return decodeAs[turn.MemorySaved](data)
	case turn.EventFinalized, turn.EventFinalizeForced:
		return decodeAs[turn.Finalized](data)
	case turn.EventTurnCompleted:
		return decodeAs[turn.Completed](data)
	case turn.EventError:
		return decodeAs[turn.Failed](data)
	}
	return json.RawMessage(data), nil
}

func decodeAs[T any](data []byte) (any, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return v, nil
}
