package turn

import (
	"sync"
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// turnState is the per-turn bookkeeping that turn.completed reports; it
// lives only as long as Run.
type turnState struct {
	// mu guards the counts a round's parallel searches book.
	mu       sync.Mutex
	usage    Usage
	timings  map[string]time.Duration
	cacheHit bool

	// rounds is how many agentic rounds ran.
	rounds int
	// groundedRatio is the grounding check's summary; unchecked says why
	// it did not judge the whole answer.
	groundedRatio *float64
	unchecked     string
	// withheld counts sentences the strip policy withheld, linksRemoved
	// the links the link guard removed; replaced says the fallback
	// replaced the answer.
	withheld, linksRemoved int
	replaced               bool
	// historyTrimmed counts the conversation's messages trimmed to fit
	// the window (window.go).
	historyTrimmed int
}

func newTurnState() *turnState {
	return &turnState{timings: map[string]time.Duration{}}
}

// add counts a model call's tokens.
func (st *turnState) add(u model.Usage) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.usage.PromptTokens += u.PromptTokens
	st.usage.CompletionTokens += u.CompletionTokens
}

// took adds d to a stage's time.
func (st *turnState) took(stage string, d time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.timings[stage] += d
}

// booked records one search: whether the cache answered it, and its
// stages' times.
func (st *turnState) booked(res retrieval.Retrieval) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cacheHit = st.cacheHit || res.CacheHit
	for stage, d := range res.Timings {
		st.timings[stage] += d
	}
}

// completed is the turn.completed payload.
func (st *turnState) completed(notFound bool) Completed {
	st.mu.Lock()
	defer st.mu.Unlock()
	return Completed{Usage: st.usage, Timings: millis(st.timings), CacheHit: st.cacheHit, NotFound: notFound, Rounds: st.rounds,
		GroundedRatio: st.groundedRatio, GroundingUnchecked: st.unchecked, Withheld: st.withheld, LinksRemoved: st.linksRemoved,
		AnswerReplaced: st.replaced, HistoryTrimmed: st.historyTrimmed}
}
