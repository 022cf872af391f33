package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// agentic is the research mode: the model researches the question in
// rounds with three tools (search, save, finalize) under the harness's
// rules (harness.go, harness_rules.go); the ranked fragments it
// finalizes then go through the same packing and answer as a single
// round's.
type agentic struct{}

// Play is research, then pack and answer from what it ranked.
func (agentic) Play(ctx context.Context, t *turn) (notFound bool, err error) {
	rs := newResearcher(t)
	t.trimHistory(t.engine.Window.Tokens.Count(harnessPrompt(t.engine.Prompt, rs.h, true)) + 4 + rs.toolTokens())
	// A follow-up ("and how are they ordered?") is made self-contained
	// once: rounds after the first see only the question, not the
	// conversation it refers to.
	question, err := t.condense(ctx)
	if err != nil {
		return false, err
	}
	rs.h.question = question
	final, err := rs.research(ctx)
	t.state.rounds = rs.h.round
	if err != nil {
		return false, err
	}
	arguments, _ := json.Marshal(map[string]string{"query": question})
	ev := evidence{intent: retrieval.ClassifyIntent(question),
		calls: []model.ToolCall{{ID: "call_research", Name: searchToolName, Arguments: string(arguments)}}}
	ev.results = []retrieval.Retrieval{{Query: question, Intent: ev.intent, Fragments: final}}
	ev.packing = t.pack(ctx, ev, rs.h.open)
	t.emitRetrievals(ev.results, ev.packing)
	return t.respond(ctx, ev)
}

// researcher is an agentic turn's research: the turn, the harness's
// bookkeeping, and the fence every fragment it shows the model is
// between.
type researcher struct {
	*turn
	h     *harness
	fence string
}

func newResearcher(t *turn) *researcher {
	return &researcher{turn: t, h: newHarness(agenticMaxRounds, newHarnessProtocol(t.engine.Agentic.ToolProtocol)), fence: newFence()}
}

// research plays rounds until the model finalizes or the harness does.
func (rs *researcher) research(ctx context.Context) ([]retrieval.Fragment, error) {
	h := rs.h
	for {
		h.startRound()
		start := time.Now()
		rs.emit(RoundStarted{Round: h.round})
		roundCtx, span := startSpan(ctx, "ragroute.research.round", attribute.Int("ragroute.round", h.round))
		final, end, err := rs.playRound(roundCtx)
		endSpan(span, err)
		rs.state.took(fmt.Sprintf("round_%d", h.round), time.Since(start))
		switch {
		case err != nil && ctx.Err() == nil && h.found():
			// A search or model call that fails late does not throw the
			// research away: what was found is answered, and the cause
			// is logged with the turn.
			if logger := rs.engine.Logger; logger != nil {
				logger.Warn("agentic research ended by a failure; finalizing what it found", "turn", rs.in.ID, "round", h.round, "error", err)
			}
			return rs.forceFinalize("a search or model call failed: the research ends with what it found"), nil
		case err != nil:
			return nil, err
		case end == roundFinalized:
			return final, nil
		case h.lastRound():
			return rs.forceFinalize("the last round ended"), nil
		}
	}
}

// forceFinalize ends the research without the model: the saved
// fragments, then those shown in this round.
func (rs *researcher) forceFinalize(reason string) []retrieval.Fragment {
	h := rs.h
	final, ids := h.forced(rs.engine.Searcher.Settings.MaxFragments)
	rs.emit(FinalizeForced{Round: h.round, Fragments: ids, Closed: h.closed, Open: h.open, Reason: reason})
	return final
}
