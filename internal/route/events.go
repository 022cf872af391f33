package route

import (
	"time"

	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// Event types of a turn's stream.
const (
	EventTurnStarted   = "turn.started"
	EventToolCall      = "tool.call"
	EventRetrieval     = "retrieval"
	EventDelta         = "delta"
	EventCitation      = "citation"
	EventTurnCompleted = "turn.completed"
	EventError         = "error"
)

// Event is one entry of a turn's event log. ID is its position in the log
// (1, 2, …), the SSE id a client resumes from. Data is one of the payload
// types below while the turn runs; an event read back from a shared log
// carries its payload as json.RawMessage.
type Event struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
	Data any    `json:"data"`
}

// Final reports whether the stream ends after e: turn.completed or error.
func (e Event) Final() bool { return e.Type == EventTurnCompleted || e.Type == EventError }

// Payloads of the events. Their JSON is the wire format of the SSE stream,
// the Redis turn log and the OpenAI facade's extension field.

// TurnStarted is the payload of turn.started.
type TurnStarted struct {
	TurnID string `json:"turn_id"`
	Mode   string `json:"mode"`
}

// ToolCall is the payload of tool.call: a tool the model (or the always
// policy) called, and its query.
type ToolCall struct {
	Name  string `json:"name"`
	Query string `json:"query"`
}

// RetrievalSource is one packed fragment as a retrieval event reports it.
type RetrievalSource struct {
	Marker      string   `json:"marker"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	SourceURI   string   `json:"source_uri"`
	ImageURLs   []string `json:"image_urls"`
	Score       float64  `json:"score"`
	Kind        string   `json:"kind"`
	Reassembled bool     `json:"reassembled,omitempty"`
}

// RetrievalReport is the payload of retrieval: what one search found that
// was packed, and what the budget dropped.
type RetrievalReport struct {
	Query    string            `json:"query"`
	Intent   retrieval.Intent  `json:"intent"`
	CacheHit bool              `json:"cache_hit"`
	Sources  []RetrievalSource `json:"sources"`
	Dropped  []Dropped         `json:"dropped,omitempty"`
}

// Delta is the payload of delta: the next piece of the answer.
type Delta struct {
	Text string `json:"text"`
}

// Citation is the payload of citation: a marker the answer used.
type Citation struct {
	Marker    string   `json:"marker"`
	Title     string   `json:"title"`
	SourceURI string   `json:"source_uri"`
	Heading   []string `json:"heading_path"`
}

// TurnCompleted is the payload of turn.completed.
type TurnCompleted struct {
	Usage    Usage            `json:"usage"`
	Timings  map[string]int64 `json:"timings_ms"`
	CacheHit bool             `json:"cache_hit"`
	NotFound bool             `json:"not_found"`
}

// Usage counts the chat model's tokens over a turn.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// TurnError is the payload of error; the stream ends with it.
type TurnError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func millis(timings map[string]time.Duration) map[string]int64 {
	out := make(map[string]int64, len(timings))
	for k, v := range timings {
		out[k] = v.Milliseconds()
	}
	return out
}
