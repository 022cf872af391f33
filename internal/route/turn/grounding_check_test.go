package turn_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/vectorcache"
)

// The grounding check's clients with the fragments' units through a
// vector cache, as the assembly wires them, and the answer's sentences
// straight to the embedder (the assembly keeps those too, apart:
// assembly.TestCheckerKeepsUnitAndSentenceVectors), so that a test sees
// each turn's sentences sent.
func cachedChecker(embedder knowledge.Embedder) answer.Checker {
	units := vectorcache.Embedder{Embedder: embedder, Cache: vectorcache.NewMemory(1 << 20), Identity: "test"}
	return answer.Checker{Embedders: answer.Embedders{Units: units, Sentences: embedder}}
}

// inputLog records every text an embedder is sent, in order.
type inputLog struct {
	knowledge.Embedder
	mu    sync.Mutex
	texts []string
}

func (l *inputLog) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	l.mu.Lock()
	l.texts = append(l.texts, texts...)
	l.mu.Unlock()
	return l.Embedder.Embed(ctx, texts)
}

// since is what the embedder was sent after the first n texts.
func (l *inputLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.texts[n:])
}

func (l *inputLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.texts)
}

// A second turn over the same fragments sends the embedder the answer's
// sentences only: the fragments' sentences were kept from the first.
func TestSecondTurnSendsNoFragmentSentenceToTheEmbedder(t *testing.T) {
	const written = "Lower waves are applied first [S1]. A wave starts when the previous one is healthy."
	w := newFastWorld(t, searchesThenAnswers("sync waves order", written))
	check := &inputLog{Embedder: w.runner.Searcher.Embedder}
	w.runner.Answer.Check = cachedChecker(check)

	first := w.run(staff, routetest.User("How are sync waves ordered?"))
	if g := groundings(first); len(g) != 2 || completed(t, first).GroundedRatio == nil {
		t.Fatalf("first turn: grounding %+v", g)
	}
	units := check.len() - 2 // all it sent but the answer's two sentences
	if units < 2 {
		t.Fatalf("the first turn embedded %d fragment sentences", units)
	}
	before := check.len()
	second := w.run(staff, routetest.User("In which order do sync waves go?"))
	want := []string{"Lower waves are applied first [S1].", "A wave starts when the previous one is healthy."}
	if got := check.since(before); !slices.Equal(got, want) {
		t.Errorf("the second turn sent the check's embedder %q, want only the answer's sentences %q", got, want)
	}
	if r := completed(t, second).GroundedRatio; r == nil || *r != *completed(t, first).GroundedRatio {
		t.Errorf("grounded ratio %v with kept vectors, %v without", r, completed(t, first).GroundedRatio)
	}
}

// stalledEmbedder holds every call until its context ends.
type stalledEmbedder struct{ calls chan struct{} }

func (s stalledEmbedder) Embed(ctx context.Context, _ []string) ([][]float32, error) {
	s.calls <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// A check that does not answer holds neither its own turn past the check's
// wait (annotate has shown the answer already) nor another turn: the next
// turn's query is embedded and its first token streams while the first
// turn's check still hangs.
func TestAStalledCheckHoldsNoTurn(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync waves order", "Lower waves are applied first [S1]."))
	stalled := stalledEmbedder{calls: make(chan struct{}, 16)}
	w.runner.Answer.Check = answer.Checker{Embedders: answer.Embedders{Units: stalled, Sentences: stalled}, Wait: 300 * time.Millisecond}

	firstDone := make(chan []turn.Event, 1)
	go func() { firstDone <- w.run(staff, routetest.User("How are sync waves ordered?")) }()
	<-stalled.calls // the first turn's check is embedding, and hangs

	start := time.Now()
	var firstToken time.Duration
	in := turn.Input{ID: "t2", Messages: []model.Message{routetest.User("Which sync wave goes first?")}, Principals: staff}
	w.runner.Run(context.Background(), in, func(ev turn.Event) {
		if ev.Type == turn.EventDelta && firstToken == 0 {
			firstToken = time.Since(start)
		}
	})
	if firstToken == 0 || firstToken > 200*time.Millisecond {
		t.Errorf("the second turn's first token came after %s, behind the first turn's stalled check", firstToken)
	}

	events := <-firstDone
	done := completed(t, events)
	if done.GroundingUnchecked != answer.UncheckedDeadline || done.GroundedRatio != nil {
		t.Errorf("the stalled turn completed with %+v, want grounding_unchecked %s and no ratio", done, answer.UncheckedDeadline)
	}
	if got := routetest.AnswerOf(events); got != "Lower waves are applied first [S1]." {
		t.Errorf("the stalled turn's answer %q", got)
	}
	if d := time.Duration(done.Timings["grounding"]) * time.Millisecond; d < 250*time.Millisecond || d > 2*time.Second {
		t.Errorf("the turn waited %s for the check, want about its 300ms wait", d)
	}
}

// failingEmbedder fails every call.
type failingEmbedder struct{}

func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("embedder down")
}

// With the embedder failing, an annotated answer is still answered, and
// the turn says the check did not run; the check's time is a stage.
func TestAnnotateCompletesWithoutTheCheckWhenTheEmbedderFails(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync waves order", "Lower waves are applied first [S1]."))
	w.runner.Answer.Check = answer.Checker{Embedders: answer.Embedders{Units: failingEmbedder{}, Sentences: failingEmbedder{}}}
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	done := completed(t, events)
	if done.GroundingUnchecked != answer.UncheckedFailed || done.GroundedRatio != nil || len(groundings(events)) != 0 {
		t.Errorf("completed %+v, want grounding_unchecked %s", done, answer.UncheckedFailed)
	}
	if got := routetest.AnswerOf(events); !strings.HasPrefix(got, "Lower waves are applied first") {
		t.Errorf("answer %q", got)
	}
	if _, ok := done.Timings["grounding"]; !ok {
		t.Errorf("timings %v have no grounding stage", done.Timings)
	}
}
