package turn

// Completed is the payload of turn.completed.
type Completed struct {
	Usage Usage `json:"usage"`
	// JudgeUsage counts the judge's tokens (answer.judge), apart from the
	// chat model's: another model, priced apart; absent when it was not
	// asked.
	JudgeUsage *Usage           `json:"judge_usage,omitempty"`
	Timings    map[string]int64 `json:"timings_ms"`
	CacheHit   bool             `json:"cache_hit"`
	NotFound   bool             `json:"not_found"`
	// Rounds is how many agentic rounds ran (0 in single-round mode).
	Rounds int `json:"rounds,omitempty"`
	AnswerChecks
}

// AnswerChecks is what the route's checks did to the answer: one
// definition for turn.completed, the OpenAI facade's extension and the
// turn's own bookkeeping.
type AnswerChecks struct {
	// GroundedRatio is the share of the model's answer sentences the
	// packed fragments support (absent when no answer was checked).
	GroundedRatio *float64 `json:"grounded_ratio,omitempty"`
	// GroundingUnchecked says why the grounding check did not judge the
	// whole answer (annotate, which shows it as written, ends the turn
	// without them): check_failed (the embedder failed) or check_deadline
	// (the verdicts did not come within the check's wait). The grounded
	// ratio is then absent.
	GroundingUnchecked string `json:"grounding_unchecked,omitempty"`
	// Withheld counts the answer's sentences the strip policy withheld.
	Withheld int `json:"withheld_sentences,omitempty"`
	// LinksRemoved counts links and URLs removed from the answer because
	// no packed fragment or the platform prompt holds them.
	LinksRemoved int `json:"links_removed,omitempty"`
	// AnswerReplaced: the model's answer was replaced by the extractive
	// one (grounding fallback).
	AnswerReplaced bool `json:"answer_replaced,omitempty"`
	// HistoryTrimmed counts the conversation's oldest messages the turn
	// left out of its model calls to keep them in the window; also on
	// the retrieval events, absent when the model answered directly.
	HistoryTrimmed int `json:"history_trimmed,omitempty"`
}

// Usage counts the chat model's tokens over a turn.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}
