package turn

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// evidence is what a turn answers from, whichever mode found it: the
// searches as the answering call is shown them (the round's tool calls,
// the results of those that ran, the first ones), and their fragments
// packed into the window.
type evidence struct {
	// intent is the question's, which picks the answer's style.
	intent  retrieval.Intent
	calls   []model.ToolCall
	results []retrieval.Retrieval
	packing Packing
	// verdict is the answerability check's on this packing, once it ran
	// (nil: not yet, or no rule applies); a new packing has none.
	verdict *AnswerabilityReport
}

// refused says whether the answerability check ran on this packing and
// refused it.
func (ev evidence) refused() bool { return ev.verdict != nil && !ev.verdict.Answerable }

// pack lays the searches' fragments out for the answering call, at most
// retrieval.maxFragments of them, under the route's flagged-fragment
// policy, into what the answering call leaves of the prompt's room: its
// system prompt, the conversation, the round's calls and the framing of
// their results (and the parts an agentic research left open) counted as
// they will be sent. ev's packing is not read.
func (t *turn) pack(ctx context.Context, ev evidence, open []string) Packing {
	_, span := startSpan(ctx, "ragroute.pack")
	defer span.End()
	fragments, capped := mergeFragments(ev.results, t.engine.Searcher.Settings.MaxFragments)
	ev.packing = newPacking(t.prompt, ev.intent)
	ev.packing.Open, ev.packing.Capped = open, capped
	w := t.engine.Window
	// Less 8: fenced blocks joined count a token or so more than apart.
	ev.packing.Budget = w.promptTokens() - w.messageTokens(answerMessages(t.in.Messages, ev)) - 8
	packing := packFragments(ev.packing, t.engine.Search.FlaggedFragments, fragments, w.Tokens)
	span.SetAttributes(attribute.Int("ragroute.packed", len(packing.Packed)), attribute.Int("ragroute.dropped", len(packing.Dropped)),
		attribute.Int("ragroute.capped", len(capped)))
	return packing
}

// emitRetrievals reports each search: the fragments of it that were
// packed, under their markers, and what the budget dropped.
func (t *turn) emitRetrievals(results []retrieval.Retrieval, packing Packing) {
	markers := map[string]retrieval.Fragment{}
	for _, f := range packing.Packed {
		markers[f.ID] = f
	}
	for _, res := range results {
		ev := RetrievalReport{Query: res.Query, Intent: res.Intent, CacheHit: res.CacheHit, Dropped: packing.Dropped,
			HistoryTrimmed: t.state.checks.HistoryTrimmed}
		for _, f := range res.Fragments {
			if packing.Capped[f.ID] {
				ev.Capped++
			}
			packed, ok := markers[f.ID]
			if !ok {
				continue
			}
			ev.Sources = append(ev.Sources, RetrievalSource{Marker: packed.Marker, Title: f.Title, HeadingPath: f.HeadingPath,
				SourceURI: f.SourceURI, ImageURLs: f.ImageURLs, Score: f.Score, Similarity: f.Similarity, Kind: f.Kind, Reassembled: f.Reassembled})
		}
		t.emit(ev)
	}
}

// answerMessages are the answering call's window: the conversation under
// the packing's system message, the round's calls and a result for each.
// A packed fragment is in the result of the first call that found it
// only: the packing budgeted it once.
func answerMessages(history []model.Message, ev evidence) []model.Message {
	messages := withSystem(ev.packing.System, history)
	messages = append(messages, model.Message{Role: model.RoleAssistant, ToolCalls: ev.calls})
	given := map[string]bool{}
	for i, call := range ev.calls {
		if i >= len(ev.results) {
			// Past the round's cap: the protocol wants a result for every
			// call id, and the model must learn the call did not run.
			messages = append(messages, model.Message{Role: model.RoleTool, ToolCallID: call.ID, Content: notRunResult(len(ev.results))})
			continue
		}
		ids := map[string]bool{}
		for _, f := range ev.results[i].Fragments {
			if !given[f.ID] {
				ids[f.ID], given[f.ID] = true, true
			}
		}
		messages = append(messages, model.Message{Role: model.RoleTool, ToolCallID: call.ID, Content: ev.packing.context(ids)})
	}
	return messages
}
