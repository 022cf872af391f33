package turn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/vectorcache"
)

// saturatedEmbedder answers no call until the test lets it: then each
// call is embedded (release) or fails (fail).
type saturatedEmbedder struct {
	knowledge.Embedder
	open    chan struct{}
	failing bool
}

func (s *saturatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-s.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.failing {
		return nil, errors.New("embedder overloaded")
	}
	return s.Embedder.Embed(ctx, texts)
}

// answersWritten is the chat model, telling when each answering call has
// streamed its last word into the route.
type answersWritten struct {
	turn.ChatModel
	written chan struct{}
}

func (a answersWritten) Stream(ctx context.Context, messages []model.Message, tools []model.Tool, gen model.Generation,
	onDelta func(string) error) (model.Reply, error) {
	reply, err := a.ChatModel.Stream(ctx, messages, tools, gen, onDelta)
	if len(tools) == 0 {
		a.written <- struct{}{}
	}
	return reply, err
}

// loadedTurns are concurrent turns whose check is saturated: the
// checker's client as the assembly wires it (the fragments' units through
// a vector cache, every turn's texts sharing at most 2 calls of 16 at
// once) in front of an embedder that answers nothing until the test lets
// it.
type loadedTurns struct {
	world   *fastWorld
	blocked *saturatedEmbedder
	mu      sync.Mutex
	events  [][]turn.Event
	done    sync.WaitGroup
}

const loadedTurnCount = 24

func startLoadedTurns(t *testing.T, policy podconfig.GroundingPolicy, wait time.Duration, failing bool) *loadedTurns {
	t.Helper()
	w := withPolicy(newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence+inventedSentence)), policy)
	blocked := &saturatedEmbedder{Embedder: w.runner.Searcher.Embedder, open: make(chan struct{}), failing: failing}
	client := model.NewShared(blocked, 2, 16).Lane(model.Finishing)
	units := vectorcache.Embedder{Embedder: client, Cache: vectorcache.NewMemory(1 << 20), Identity: "test"}
	w.runner.Answer.Check = answer.Checker{Embedders: answer.Embedders{Units: units, Sentences: client}, Wait: wait}
	written := make(chan struct{}, loadedTurnCount)
	w.runner.Chat = answersWritten{ChatModel: w.runner.Chat, written: written}

	l := &loadedTurns{world: w, blocked: blocked, events: make([][]turn.Event, loadedTurnCount)}
	for i := range loadedTurnCount {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			in := turn.Input{ID: fmt.Sprint("t", i), Messages: []model.Message{routetest.User(fmt.Sprintf("How are sync waves ordered (%d)?", i))},
				Principals: staff}
			w.runner.Run(context.Background(), in, func(ev turn.Event) {
				l.mu.Lock()
				l.events[i] = append(l.events[i], ev)
				l.mu.Unlock()
			})
		}()
	}
	for range loadedTurnCount {
		<-written // every turn's answer is in the route, its check waiting
	}
	return l
}

// shown is what the turns' clients have read so far.
func (l *loadedTurns) shown() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, events := range l.events {
		b.WriteString(routetest.AnswerOf(events))
	}
	return b.String()
}

// finish lets the embedder answer and waits for every turn.
func (l *loadedTurns) finish() [][]turn.Event {
	close(l.blocked.open)
	l.done.Wait()
	return l.events
}

// Under strip and fallback a saturated check shows nothing it has not
// judged: while no verdict can come, the clients of two dozen turns whose
// answers are written read nothing; once the checker catches up, strip
// shows each supported sentence only after its verdict and never the
// invented one, and fallback the whole answer only once all of it is
// judged.
func TestSaturatedCheckShowsNoUncheckedSentence(t *testing.T) {
	for _, policy := range []podconfig.GroundingPolicy{podconfig.GroundingStrip, podconfig.GroundingFallback} {
		t.Run(string(policy), func(t *testing.T) {
			l := startLoadedTurns(t, policy, 0, false)
			if got := l.shown(); got != "" {
				t.Errorf("with the check saturated, the clients read %q", got)
			}
			for i, events := range l.finish() {
				done := completed(t, events)
				if done.GroundingUnchecked != "" || done.GroundedRatio == nil || *done.GroundedRatio != 0.5 {
					t.Fatalf("turn %d completed %+v", i, done)
				}
				judged := 0
				for _, ev := range events {
					switch ev.Type {
					case turn.EventGrounding:
						judged++
					case turn.EventDelta:
						text := ev.Data.(turn.Delta).Text
						if policy == podconfig.GroundingStrip && strings.Contains(text, "wave-limit") {
							t.Errorf("turn %d showed the unsupported sentence %q", i, text)
						}
						if judged < 1 || policy == podconfig.GroundingFallback && judged < 2 {
							t.Errorf("turn %d showed %q after %d verdicts", i, text, judged)
						}
					}
				}
				want := groundedSentence
				if policy == podconfig.GroundingFallback {
					want = groundedSentence + inventedSentence // half supported: at fallbackBelow, it stands
				}
				if got := routetest.AnswerOf(events); got != want {
					t.Errorf("turn %d: client read %q, want %q", i, got, want)
				}
			}
		})
	}
}

// Under strip and fallback a check that fails under load shows nothing
// unchecked either: every turn ends with an error, its answer unshown.
func TestFailedCheckUnderLoadShowsNothing(t *testing.T) {
	for _, policy := range []podconfig.GroundingPolicy{podconfig.GroundingStrip, podconfig.GroundingFallback} {
		t.Run(string(policy), func(t *testing.T) {
			l := startLoadedTurns(t, policy, 0, true)
			for i, events := range l.finish() {
				if got := routetest.AnswerOf(events); got != "" {
					t.Errorf("turn %d: client read %q", i, got)
				}
				if last := events[len(events)-1]; last.Type != turn.EventError {
					t.Errorf("turn %d ended with %s, want an error", i, last.Type)
				}
			}
		})
	}
}

// Under annotate a saturated check holds no answer: every turn streams its
// answer as written and, past the check's wait, completes saying the check
// did not finish (check_deadline), with no grounded ratio.
func TestAnnotateUnderASaturatedCheckStreamsAndSaysUnchecked(t *testing.T) {
	l := startLoadedTurns(t, podconfig.GroundingAnnotate, time.Millisecond, false)
	l.done.Wait() // the check's wait ends each turn with the embedder still blocked
	for i, events := range l.finish() {
		if got := routetest.AnswerOf(events); got != groundedSentence+inventedSentence {
			t.Errorf("turn %d: client read %q", i, got)
		}
		if done := completed(t, events); done.GroundingUnchecked != answer.UncheckedDeadline || done.GroundedRatio != nil {
			t.Errorf("turn %d completed %+v", i, done)
		}
	}
}
