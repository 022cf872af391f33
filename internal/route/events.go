package route

import "time"

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
// (1, 2, …), the SSE id a client resumes from.
type Event struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
	Data any    `json:"data"`
}

// final reports whether the stream ends after e.
func (e Event) final() bool { return e.Type == EventTurnCompleted || e.Type == EventError }

// Payloads of the events.

type turnStarted struct {
	TurnID string `json:"turn_id"`
	Mode   string `json:"mode"`
}

type toolCall struct {
	Name  string `json:"name"`
	Query string `json:"query"`
}

type retrievalSource struct {
	Marker      string   `json:"marker"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	SourceURI   string   `json:"source_uri"`
	ImageURLs   []string `json:"image_urls"`
	Score       float64  `json:"score"`
	Kind        string   `json:"kind"`
	Reassembled bool     `json:"reassembled,omitempty"`
}

type retrieval struct {
	Query    string            `json:"query"`
	Intent   Intent            `json:"intent"`
	CacheHit bool              `json:"cache_hit"`
	Sources  []retrievalSource `json:"sources"`
	Dropped  []Dropped         `json:"dropped,omitempty"`
}

type delta struct {
	Text string `json:"text"`
}

type citation struct {
	Marker    string   `json:"marker"`
	Title     string   `json:"title"`
	SourceURI string   `json:"source_uri"`
	Heading   []string `json:"heading_path"`
}

type turnCompleted struct {
	Usage    usage            `json:"usage"`
	Timings  map[string]int64 `json:"timings_ms"`
	CacheHit bool             `json:"cache_hit"`
	NotFound bool             `json:"not_found"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type turnError struct {
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
