package turn

import (
	"encoding/json"
	"fmt"
)

// Each payload names its event.

// EventType is turn.started.
func (Started) EventType() string { return EventTurnStarted }

// EventType is tool.call.
func (ToolCall) EventType() string { return EventToolCall }

// EventType is research.
func (Research) EventType() string { return EventResearch }

// EventType is model.refused.
func (ModelRefused) EventType() string { return EventModelRefused }

// EventType is answerability.
func (AnswerabilityReport) EventType() string { return EventAnswerability }

// EventType is retrieval.
func (RetrievalReport) EventType() string { return EventRetrieval }

// EventType is delta.
func (Delta) EventType() string { return EventDelta }

// EventType is citation.
func (Citation) EventType() string { return EventCitation }

// EventType is grounding.
func (Grounding) EventType() string { return EventGrounding }

// EventType is answer.replaced.
func (AnswerReplaced) EventType() string { return EventAnswerReplaced }

// EventType is round.started.
func (RoundStarted) EventType() string { return EventRoundStarted }

// EventType is memory.saved.
func (MemorySaved) EventType() string { return EventMemorySaved }

// EventType is finalized.
func (Finalized) EventType() string { return EventFinalized }

// EventType is finalize.forced.
func (FinalizeForced) EventType() string { return EventFinalizeForced }

// EventType is turn.completed.
func (Completed) EventType() string { return EventTurnCompleted }

// EventType is error.
func (Failed) EventType() string { return EventError }

// Unknown is the payload of an event type this build does not know (a
// newer replica's, read back from a shared log or a stream): kept as it
// was written.
type Unknown struct {
	Type string
	Raw  json.RawMessage
}

// EventType is the event's own type.
func (u Unknown) EventType() string { return u.Type }

// MarshalJSON writes the payload as it was read.
func (u Unknown) MarshalJSON() ([]byte, error) { return u.Raw, nil }

// Decode decodes an event's payload into the type its event names, the
// one reading of a payload: the turn log's replicas, the stream's client
// readers and Event's own JSON use it. A type this build does not know
// keeps its payload as Unknown.
func Decode(typ string, data []byte) (Payload, error) {
	switch typ {
	case EventTurnStarted:
		return decodeAs[Started](data)
	case EventToolCall:
		return decodeAs[ToolCall](data)
	case EventResearch:
		return decodeAs[Research](data)
	case EventAnswerability:
		return decodeAs[AnswerabilityReport](data)
	case EventModelRefused:
		return decodeAs[ModelRefused](data)
	case EventRetrieval:
		return decodeAs[RetrievalReport](data)
	case EventDelta:
		return decodeAs[Delta](data)
	case EventCitation:
		return decodeAs[Citation](data)
	case EventGrounding:
		return decodeAs[Grounding](data)
	case EventAnswerReplaced:
		return decodeAs[AnswerReplaced](data)
	case EventRoundStarted:
		return decodeAs[RoundStarted](data)
	case EventMemorySaved:
		return decodeAs[MemorySaved](data)
	case EventFinalized:
		return decodeAs[Finalized](data)
	case EventFinalizeForced:
		return decodeAs[FinalizeForced](data)
	case EventTurnCompleted:
		return decodeAs[Completed](data)
	case EventError:
		return decodeAs[Failed](data)
	}
	return Unknown{Type: typ, Raw: append(json.RawMessage(nil), data...)}, nil
}

func decodeAs[T Payload](data []byte) (Payload, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return v, nil
}

// UnmarshalJSON reads an event as MarshalJSON wrote it, its payload
// decoded into its type.
func (e *Event) UnmarshalJSON(data []byte) error {
	var wire struct {
		ID   int64           `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	payload, err := Decode(wire.Type, wire.Data)
	if err != nil {
		return fmt.Errorf("event %d (%s): %w", wire.ID, wire.Type, err)
	}
	*e = Event{ID: wire.ID, Type: wire.Type, Data: payload}
	return nil
}
