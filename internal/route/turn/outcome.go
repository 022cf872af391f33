package turn

import (
	"strings"

	"github.com/ragroute/ragroute/internal/route/answer"
)

// Outcome is what a turn's events add up to, folded as they arrive
// (Add): the one reading of a turn that the API's feedback, the OpenAI
// facade, MCP's ask, the live scorer, the lab and the demo share.
type Outcome struct {
	// Started is turn.started's payload.
	Started Started
	answer  strings.Builder
	// ToolCalls are the searches the model (or the always policy, or the
	// agentic harness) called, in order; Research the single round's one
	// rephrased re-search.
	ToolCalls []ToolCall
	Research  []Research
	// Retrievals are the retrieval events in order: an agentic turn's
	// harness searches (Round > 0), then the answer's fragments (Round 0).
	Retrievals []RetrievalReport
	// Harness is an agentic turn's research step by step: its
	// round.started, memory.saved, finalized and finalize.forced events,
	// and its rounds' tool.call and retrieval events.
	Harness []Event
	// Rounds counts round.started events; Forced: the harness finalized.
	Rounds int
	Forced bool
	// Answerability is the answerability check's last report, if it ran
	// (after a re-search, the re-search's).
	Answerability *AnswerabilityReport
	// Refusals are the model's answers with the not-found wording.
	Refusals []ModelRefused
	// Groundings are the grounding check's verdicts, one per sentence.
	Groundings []answer.Grounding
	// Replaced: the model's answer was replaced by the extractive one.
	Replaced *AnswerReplaced
	// Citations are the citation events in order.
	Citations []Citation
	// Completed or Failed is the turn's last event, once it came.
	Completed *Completed
	Failed    *Failed
}

// Add folds the next event of the turn.
func (o *Outcome) Add(ev Event) {
	switch d := ev.Data.(type) {
	case Started:
		o.Started = d
	case ToolCall:
		o.ToolCalls = append(o.ToolCalls, d)
		if d.Round > 0 {
			o.Harness = append(o.Harness, ev)
		}
	case Research:
		o.Research = append(o.Research, d)
	case RetrievalReport:
		o.Retrievals = append(o.Retrievals, d)
		if d.Round > 0 {
			o.Harness = append(o.Harness, ev)
		}
	case RoundStarted:
		o.Rounds++
		o.Harness = append(o.Harness, ev)
	case MemorySaved, Finalized:
		o.Harness = append(o.Harness, ev)
	case FinalizeForced:
		o.Forced = true
		o.Harness = append(o.Harness, ev)
	case AnswerabilityReport:
		o.Answerability = &d
	case ModelRefused:
		o.Refusals = append(o.Refusals, d)
	case Delta:
		o.answer.WriteString(d.Text)
	case Grounding:
		o.Groundings = append(o.Groundings, answer.Grounding(d))
	case AnswerReplaced:
		o.Replaced = &d
	case Citation:
		o.Citations = append(o.Citations, d)
	case Completed:
		o.Completed = &d
	case Failed:
		o.Failed = &d
	}
}

// Answer is the answer as its client read it: the deltas so far, joined.
func (o *Outcome) Answer() string { return o.answer.String() }

// Sources are the fragments packed for the answer (the retrieval events
// of round 0), in order.
func (o *Outcome) Sources() []RetrievalSource {
	var sources []RetrievalSource
	for _, r := range o.Retrievals {
		if r.Round == 0 {
			sources = append(sources, r.Sources...)
		}
	}
	return sources
}
