package turn

import (
	"time"

	"github.com/ragroute/ragroute/internal/route/answer"
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

	// EventGrounding: how one sentence of the answer is supported.
	EventGrounding = "grounding"

	// EventAnswerReplaced: the model's answer was not shown; the
	// extractive answer that follows replaces it (grounding fallback).
	EventAnswerReplaced = "answer.replaced"

	// EventAnswerability: the model's odds, before it answered, that the
	// packed fragments hold the answer (answerable.go).
	EventAnswerability = "answerability"

	// EventResearch: a search that found nothing was rephrased and run
	// once more before the not-found answer.
	EventResearch = "research"

	// EventModelRefused: the model answered with the not-found wording;
	// its Override says what the route did about it (whenModelRefuses).
	EventModelRefused = "model.refused"

	// The agentic harness's events (mode: agentic).
	EventRoundStarted   = "round.started"
	EventMemorySaved    = "memory.saved"
	EventFinalized      = "finalized"
	EventFinalizeForced = "finalize.forced"
)

// Event is one entry of a turn's event log. ID is its position in the log
// (1, 2, …), the SSE id a client resumes from. Data is one of the payload
// types below, also when read back from a shared log or a client's stream
// (Decode); Type is always Data's EventType.
type Event struct {
	ID   int64   `json:"id"`
	Type string  `json:"type"`
	Data Payload `json:"data"`
}

// Payload is an event's data. Its type names the event, so an event is
// made from its payload alone (NewEvent) and decoded back into the same
// type (Decode).
type Payload interface {
	EventType() string
}

// NewEvent is the event that carries p.
func NewEvent(p Payload) Event { return Event{Type: p.EventType(), Data: p} }

// Final reports whether the stream ends after e: turn.completed or error.
func (e Event) Final() bool { return e.Type == EventTurnCompleted || e.Type == EventError }

// Payloads of the events. Their JSON is the wire format of the SSE stream,
// the Redis turn log and the OpenAI facade's extension field.

// Started is the payload of turn.started.
type Started struct {
	TurnID         string `json:"turn_id"`
	ConversationID string `json:"conversation_id,omitempty"`
	Mode           string `json:"mode"`
}

// ToolCall is the payload of tool.call: a tool the model (or the always
// policy) called, and its query. In agentic mode it also says in which
// round, and whether the harness accepted the call and why not.
type ToolCall struct {
	Name   string `json:"name"`
	Query  string `json:"query"`
	Round  int    `json:"round,omitempty"`
	Status string `json:"status,omitempty"` // accepted or rejected
	Reason string `json:"reason,omitempty"`
}

// Status values of an agentic tool.call.
const (
	CallAccepted = "accepted"
	CallRejected = "rejected"
)

// AnswerabilityReport is the payload of answerability: the check the
// route ran on what was packed, the signals it read, and the verdict.
type AnswerabilityReport struct {
	// Check is coverage, model, or off when only the names or relevance
	// rule decides.
	Check string `json:"check"`
	// Score is the check's own: coverage's, or the model's P(yes),
	// normalised over yes and no (model); Threshold is the route's.
	Score     float64 `json:"score"`
	Threshold float64 `json:"threshold"`
	// Coverage is the share of the question's content words the
	// best-covering packed fragment holds, read whatever the check;
	// Missing are the words it lacks.
	Coverage float64  `json:"coverage"`
	Missing  []string `json:"missing,omitempty"`
	// MissingNames are the names the question uses (a tool, a resource
	// kind, an identifier) that no packed fragment holds in any form.
	MissingNames []string `json:"missing_names,omitempty"`
	// Relevance is the cross-encoder's relevance of the best packed
	// fragment; nil when the route reranks with none.
	Relevance *float64 `json:"relevance,omitempty"`
	// Refused names the rules that refused: the check's (coverage or
	// model), names, relevance. Empty when Answerable.
	Refused    []string `json:"refused,omitempty"`
	Answerable bool     `json:"answerable"`
	// CalibratedBy is what set the threshold, as the route's
	// answerability.calibratedBy says (a RouteEvaluation's recommendation,
	// with its date); empty when nothing is named.
	CalibratedBy string `json:"calibrated_by,omitempty"`
}

// ModelRefused is the payload of model.refused: the model answered with
// the not-found wording. Override is accept when that stands (also when
// the answerability check did not let the question through: there was
// nothing to override), else quote or askAgain, what the route did
// instead; Again marks the refusal of the answer asked again.
type ModelRefused struct {
	Override string `json:"override"`
	Again    bool   `json:"again,omitempty"`
}

// Research is the payload of research: the queries that found nothing,
// the rephrased one searched once more, and how many fragments it found.
type Research struct {
	Queries  []string `json:"queries"`
	Rephrase string   `json:"rephrased"`
	Found    int      `json:"found"`
}

// RoundStarted is the payload of round.started.
type RoundStarted struct {
	Round int `json:"round"`
}

// SavedFragment is a fragment the model kept, with why it matters.
type SavedFragment struct {
	ID        string `json:"id"`
	Note      string `json:"note"`
	Title     string `json:"title"`
	SourceURI string `json:"source_uri"`
}

// MemorySaved is the payload of memory.saved: what the next round starts
// from.
type MemorySaved struct {
	Round     int             `json:"round"`
	Fragments []SavedFragment `json:"fragments"`
	Closed    []string        `json:"closed"`
	Open      []string        `json:"open"`
	Next      string          `json:"next,omitempty"`
}

// Finalized is the payload of finalized: the ranked fragment ids that go
// to the answer.
type Finalized struct {
	Round     int      `json:"round"`
	Fragments []string `json:"fragments"`
	Closed    []string `json:"closed,omitempty"`
	Open      []string `json:"open,omitempty"`
	// Reason says why the harness finalized (finalize.forced only).
	Reason string `json:"reason,omitempty"`
}

// FinalizeForced is the payload of finalize.forced: what the harness
// finalized itself, and why (Reason).
type FinalizeForced Finalized

// RetrievalSource is one packed fragment as a retrieval event reports it.
type RetrievalSource struct {
	Marker      string   `json:"marker"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	SourceURI   string   `json:"source_uri"`
	ImageURLs   []string `json:"image_urls"`
	// Score ranked the fragment: its similarity, or a cross-encoder's
	// relevance.
	Score float64 `json:"score"`
	// Similarity is its cosine to the question, in every rerank mode
	// (what retrieval.researchBelow and diversity.margin are set in).
	Similarity  float64 `json:"similarity"`
	Kind        string  `json:"kind"`
	Reassembled bool    `json:"reassembled,omitempty"`
}

// RetrievalReport is the payload of retrieval: what one search found that
// was packed, and what the budget dropped.
type RetrievalReport struct {
	// Round is the agentic round of a harness search (its sources are
	// marked with the harness's ids, F1…); 0 for the answer's fragments.
	Round    int               `json:"round,omitempty"`
	Query    string            `json:"query"`
	Intent   retrieval.Intent  `json:"intent"`
	CacheHit bool              `json:"cache_hit"`
	Sources  []RetrievalSource `json:"sources"`
	Dropped  []Dropped         `json:"dropped,omitempty"`
	// Capped counts the fragments this search found that the turn's
	// retrieval.maxFragments left out: the turn's searches share the cap,
	// each one's best first. They are neither packed nor cited.
	Capped int `json:"capped,omitempty"`
	// HistoryTrimmed counts the conversation's oldest messages the turn
	// left out of its model calls to keep them in the window (the same
	// count as turn.completed's; on the answer's searches, round 0).
	HistoryTrimmed int `json:"history_trimmed,omitempty"`
}

// Grounding is the payload of grounding: the check's verdict on one
// sentence of the answer.
type Grounding answer.Grounding

// Delta is the payload of delta: the next piece of the answer.
type Delta struct {
	Text string `json:"text"`
}

// Citation is the payload of citation: a marker the answer used, or
// (Inferred) the fragment that supports a sentence the model left
// unmarked.
type Citation struct {
	Marker    string   `json:"marker"`
	Title     string   `json:"title"`
	SourceURI string   `json:"source_uri"`
	Heading   []string `json:"heading_path"`
	Inferred  bool     `json:"inferred,omitempty"`
}

// AnswerReplaced is the payload of answer.replaced.
type AnswerReplaced struct {
	// GroundedRatio is the share of the model's sentences supported.
	GroundedRatio float64 `json:"grounded_ratio"`
	// Reason is why: "below fallbackBelow" or "every sentence withheld".
	Reason string `json:"reason"`
}

// Failed is the payload of error; the stream ends with it.
type Failed struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Retryable: the stream broke off, not the turn (the turn log was
	// unavailable); the client may reconnect with Last-Event-ID.
	Retryable bool `json:"retryable,omitempty"`
}

func millis(timings map[string]time.Duration) map[string]int64 {
	out := make(map[string]int64, len(timings))
	for k, v := range timings {
		out[k] = v.Milliseconds()
	}
	return out
}
