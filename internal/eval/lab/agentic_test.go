package lab

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// agenticGold is a corpus of three documents and the gold sections of a
// two-part question (prune.md and retry.md) and a control (retry.md).
func agenticGold(t *testing.T) (eval.Gold, eval.MultiQuestion, eval.MultiQuestion) {
	t.Helper()
	docs := []ingest.Document{
		{Source: "docs/prune.md", Content: "# Prune\n\n## Automatic\n\nPruning deletes resources no longer in Git.\n\n## Never\n\nAnnotate Prune=false to keep one.\n"},
		{Source: "docs/retry.md", Content: "# Retry\n\nA failed sync is retried with exponential backoff up to the limit.\n"},
		{Source: "docs/other.md", Content: "# Other\n\nSomething unrelated to the question.\n"},
	}
	multi := eval.MultiQuestion{ID: "m1", Question: "How do I prune, and retry?", Parts: []eval.Part{
		{Part: "prune", GoldFile: "prune.md", GoldHeading: []string{"Prune", "Automatic"}},
		{Part: "retry", GoldFile: "retry.md", GoldHeading: []string{"Retry"}},
	}}
	control := eval.MultiQuestion{ID: "c1", Question: "Is a failed sync retried?", Parts: []eval.Part{
		{Part: "retry", GoldFile: "retry.md", GoldHeading: []string{"Retry"}},
	}}
	gold, err := eval.NewGold("docs", docs, eval.PartQuestions([]eval.MultiQuestion{multi, control}))
	if err != nil {
		t.Fatal(err)
	}
	return gold, multi, control
}

func retrievalEvent(round int, sources ...turn.RetrievalSource) turn.Event {
	return turn.Event{Type: turn.EventRetrieval, Data: turn.RetrievalReport{Round: round, Sources: sources}}
}

func source(marker, file string, path ...string) turn.RetrievalSource {
	return turn.RetrievalSource{Marker: marker, SourceURI: "https://docs.example/" + file, HeadingPath: path}
}

func search(name, status, query string) turn.Event {
	return turn.Event{Type: turn.EventToolCall, Data: turn.ToolCall{Name: name, Query: query, Status: status}}
}

// byURI resolves a reported fragment to its file, as the fragment
// recorder does by what the searches returned.
func byURI(s turn.RetrievalSource) (eval.Unit, bool) {
	file := s.SourceURI[len("https://docs.example/"):]
	return eval.Unit{Source: "docs/" + file, HeadingPath: s.HeadingPath}, true
}

func completed(ratio float64, rounds int) turn.Event {
	return turn.Event{Type: turn.EventTurnCompleted, Data: turn.Completed{Rounds: rounds, AnswerChecks: turn.AnswerChecks{GroundedRatio: &ratio}}}
}

// TestAgenticScoring scores scripted turns: in agentic mode only the
// answer's retrieval event (round 0, after the research) counts for the
// parts, rejected calls and other tools are not searches, and rounds,
// model calls, grounding and times are summed per kind of question.
func TestAgenticScoring(t *testing.T) {
	gold, multi, control := agenticGold(t)
	agentic := []turn.Event{
		{Type: turn.EventRoundStarted, Data: turn.RoundStarted{Round: 1}},
		search("search", turn.CallAccepted, "prune"),
		// The research saw retry.md, but the answer's set below drops it.
		retrievalEvent(1, source("F1", "prune.md", "Prune", "Automatic"), source("F2", "retry.md", "Retry")),
		search("search", turn.CallRejected, "prune"),
		search("search", turn.CallAccepted, "retry backoff"),
		retrievalEvent(1, source("F3", "other.md", "Other")),
		search("save", turn.CallAccepted, ""),
		{Type: turn.EventRoundStarted, Data: turn.RoundStarted{Round: 2}},
		search("search", turn.CallAccepted, "automatic pruning"),
		{Type: turn.EventFinalizeForced, Data: turn.FinalizeForced{Round: 2, Reason: "the last round ended"}},
		retrievalEvent(0, source("S1", "prune.md", "Prune", "Automatic"), source("S2", "other.md", "Other")),
		{Type: turn.EventDelta, Data: turn.Delta{Text: "Set prune."}},
		completed(0.5, 2),
	}
	digest := digestAgentic(multi, AgenticMode, agentic, 7, 4*time.Second)
	if digest.Rounds != 2 || len(digest.Queries) != 3 || digest.ModelCalls != 7 || !digest.Forced || len(digest.Final) != 2 || digest.Shown != "Set prune." {
		t.Fatalf("agentic digest: %+v", digest)
	}
	found := partsFound(digest, gold, byURI)
	if !found[0] || found[1] {
		t.Fatalf("agentic parts found %v, want [true false]: only the final set counts", found)
	}

	// Single round: every retrieval event of the turn counts, and a
	// sibling section of the gold one (Prune › Never) does not.
	single := []turn.Event{
		search("search_knowledge", "", "How do I prune, and retry?"),
		search("web_search", "", "prune"),
		retrievalEvent(0, source("S1", "retry.md", "Retry")),
		retrievalEvent(0, source("S2", "prune.md", "Prune", "Never")),
		completed(1, 0),
	}
	singleTurn := digestAgentic(multi, AgenticSingleRound, single, 1, time.Second)
	if singleTurn.Rounds != 1 || len(singleTurn.Queries) != 1 || singleTurn.ModelCalls != 1 {
		t.Fatalf("single-round digest: %+v", singleTurn)
	}
	if found := partsFound(singleTurn, gold, byURI); found[0] || !found[1] {
		t.Fatalf("single-round parts found %v, want [false true]: Prune › Never is not the gold section", found)
	}

	// A control whose turn failed counts its part as missed and is an error.
	failed := digestAgentic(control, AgenticMode, []turn.Event{
		{Type: turn.EventRoundStarted, Data: turn.RoundStarted{Round: 1}},
		{Type: turn.EventError, Data: turn.Failed{Code: "model_error", Message: "boom"}},
	}, 1, time.Second)
	controlDone := digestAgentic(control, AgenticMode, []turn.Event{
		{Type: turn.EventRoundStarted, Data: turn.RoundStarted{Round: 1}},
		search("search", turn.CallAccepted, "retry"),
		retrievalEvent(0, source("S1", "retry.md", "Retry")),
		completed(1, 1),
	}, 3, 2*time.Second)

	turns := []agenticTurn{digest, failed, controlDone}
	founds := [][]bool{found, partsFound(failed, gold, byURI), partsFound(controlDone, gold, byURI)}
	f := modeFigures(AgenticMode, turns, founds)
	m, c := f.MultiPart, f.Controls
	if m.Questions != 1 || m.Parts != 2 || m.PartsFound != 1 || m.PartRecall != 0.5 || m.AllParts != 0 || m.Forced != 1 {
		t.Errorf("multi-part figures %+v", m)
	}
	if m.Rounds != 2 || m.Searches != 3 || m.ModelCalls != 7 || m.GroundedRatio == nil || *m.GroundedRatio != 0.5 || m.TotalP50 != 4000 {
		t.Errorf("multi-part means %+v", m)
	}
	if c.Questions != 2 || c.Errors != 1 || c.Parts != 2 || c.PartsFound != 1 || c.AllParts != 0.5 {
		t.Errorf("control figures %+v", c)
	}
	// Means are over the completed turns only.
	if c.Rounds != 1 || c.Searches != 1 || c.ModelCalls != 3 || c.GroundedTurns != 1 || math.Abs(c.TotalP95-2000) > 1e-9 {
		t.Errorf("control means %+v", c)
	}
	if got := AgenticTable(AgenticReport{Modes: []AgenticModeFigures{f}}); len(got) == 0 {
		t.Error("empty table")
	}
}

// TestCountingChat counts a turn's model calls through its context, so
// turns sharing a runner count apart.
func TestCountingChat(t *testing.T) {
	chat := countingChat{stubChat{}}
	n := new(atomic.Int64)
	ctx := context.WithValue(context.Background(), modelCallsKey{}, n)
	for range 3 {
		if _, err := chat.Stream(ctx, nil, nil, model.Generation{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := chat.Stream(context.Background(), nil, nil, model.Generation{}, nil); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 3 {
		t.Fatalf("%d calls counted, want 3", n.Load())
	}
}

type stubChat struct{}

func (stubChat) Stream(context.Context, []model.Message, []model.Tool, model.Generation, func(string) error) (model.Reply, error) {
	return model.Reply{}, nil
}

// The turns run the route's own body: its maxFragments, and its
// cross-encoder with its depth when it has one.
func TestAgenticTurnsRunTheRoutesBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts AgenticOptions
		topN int // 0: no cross-encoder
	}{
		{"fusion", agenticDefaults(AgenticOptions{Options: Options{Route: sampleRoute(t, "")}}), 0},
		{"cross-encoder", agenticDefaults(AgenticOptions{Options: Options{Route: sampleRoute(t, "http://127.0.0.1:9")}}), 20},
	} {
		a, err := newAgenticRun(&run{}, nil, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		for mode, runner := range a.runners {
			s := runner.Searcher
			if s.Settings.MaxFragments != 4 {
				t.Errorf("%s %s: maxFragments %d, want the sample route's 4", tc.name, mode, s.Settings.MaxFragments)
			}
			if string(runner.Mode) != mode {
				t.Errorf("%s: the runner plays mode %q", mode, runner.Mode)
			}
			ce, ok := s.Reranker.(*retrieval.CrossEncoder)
			switch {
			case tc.topN == 0 && ok:
				t.Errorf("%s %s: reranks with %+v, want none", tc.name, mode, ce)
			case tc.topN > 0 && (!ok || ce.TopN != tc.topN || ce.BaseURL != "http://127.0.0.1:9"):
				t.Errorf("%s %s: reranker %#v, want the cross-encoder, top %d", tc.name, mode, s.Reranker, tc.topN)
			}
		}
	}
}
