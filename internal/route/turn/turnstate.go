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
	// mu guards the counts a round's parallel searches, and the grounding
	// check's judge calls beside the answer, book.
	mu    sync.Mutex
	usage Usage
	// judgeUsage counts the judge's tokens (AnswerSettings.Judge).
	judgeUsage Usage
	timings    map[string]time.Duration
	cacheHit   bool

	// rounds is how many agentic rounds ran.
	rounds int
	// checks is what the grounding check, the link guard and the window
	// did to the answer and the conversation.
	checks AnswerChecks
}

func newTurnState() *turnState {
	return &turnState{timings: map[string]time.Duration{}}
}

// add counts a model call's tokens: the chat model's, or the judge's.
func (st *turnState) add(u model.Usage, judge bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	to := &st.usage
	if judge {
		to = &st.judgeUsage
	}
	to.PromptTokens += u.PromptTokens
	to.CompletionTokens += u.CompletionTokens
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
	done := Completed{Usage: st.usage, Timings: millis(st.timings), CacheHit: st.cacheHit, NotFound: notFound, Rounds: st.rounds,
		AnswerChecks: st.checks}
	if st.judgeUsage != (Usage{}) {
		judge := st.judgeUsage
		done.JudgeUsage = &judge
	}
	return done
}
