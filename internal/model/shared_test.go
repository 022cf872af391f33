package model

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowEmbedder counts its calls in flight and the largest batch.
type slowEmbedder struct {
	mu                  sync.Mutex
	inFlight, maxFlight int
	maxBatch            int
}

func (s *slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	s.mu.Lock()
	s.inFlight++
	s.maxFlight, s.maxBatch = max(s.maxFlight, s.inFlight), max(s.maxBatch, len(texts))
	s.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t))}
	}
	return out, nil
}

// Background embedding sends small batches, a few at once, and keeps each
// caller's vectors in order.
func TestSharedBoundsBatchesAndCallsInFlight(t *testing.T) {
	inner := &slowEmbedder{}
	e := NewShared(inner, 2, 3).Lane(Finishing)
	var wg sync.WaitGroup
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts := make([]string, 7+c)
			for i := range texts {
				texts[i] = string(make([]byte, i))
			}
			vectors, err := e.Embed(context.Background(), texts)
			if err != nil || len(vectors) != len(texts) {
				t.Errorf("Embed: %d vectors, %v", len(vectors), err)
				return
			}
			for i, v := range vectors {
				if v[0] != float32(i) {
					t.Errorf("vector %d is text %v's", i, v[0])
				}
			}
		}()
	}
	wg.Wait()
	if inner.maxFlight > 2 || inner.maxBatch > 3 {
		t.Errorf("%d calls in flight, batches of up to %d: want at most 2 and 3", inner.maxFlight, inner.maxBatch)
	}
}

// A caller that gives up while waiting for a slot is told so at once.
func TestSharedWaitsOnlyAsLongAsItsContext(t *testing.T) {
	block := make(chan struct{})
	e := NewShared(blockingEmbedder(block), 1, 8).Lane(Finishing)
	go func() { _, _ = e.Embed(context.Background(), []string{"holds the slot"}) }()
	time.Sleep(10 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := e.Embed(ctx, []string{"waits"}); err == nil {
		t.Error("a call past its context embedded anyway")
	}
	close(block)
}

type blockingEmbedder chan struct{}

func (b blockingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	<-b
	return make([][]float32, len(texts)), nil
}

// heldEmbedder holds each call until the test releases it, and records
// the texts of every call.
type heldEmbedder struct {
	started chan []string
	release chan struct{}
}

func (h heldEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.started <- texts
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t))}
	}
	return out, nil
}

// releaseAll releases the call in flight and every call after it until
// n callers have their results on done, and returns the texts of the
// calls after the first, in order. How the texts waiting are batched is
// the Shared's to choose (two questions let in together may share a
// call), so the callers, not the calls, are counted.
func (h heldEmbedder) releaseAll(t *testing.T, n int, done <-chan error) [][]string {
	t.Helper()
	var calls [][]string
	inFlight := 1
	for finished := 0; finished < n; {
		if inFlight > 0 {
			h.release <- struct{}{}
			inFlight--
		}
		select {
		case texts := <-h.started:
			calls = append(calls, texts)
			inFlight++
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished++
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d callers answered; calls after the first: %q", finished, n, calls)
		}
	}
	return calls
}

// queued is how many texts wait for a call.
func (s *Shared) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, queue := range s.queues {
		n += len(queue)
	}
	return n
}

// busy says a call is in flight or texts wait.
func (s *Shared) busy() bool {
	if s.queued() > 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running > 0
}

// Many callers with a few texts each, waiting while the embedder is busy,
// share the next call instead of queueing one call each: the grounding
// check of 64 concurrent turns costs a few calls, not 64.
func TestSharedCallersWaitingTogetherShareACall(t *testing.T) {
	inner := heldEmbedder{started: make(chan []string, 8), release: make(chan struct{})}
	shared := NewShared(inner, 1, 16)
	e := shared.Lane(Finishing)
	results := make(chan error, 6)
	embed := func(texts []string) {
		vectors, err := e.Embed(context.Background(), texts)
		if err == nil {
			for i, v := range vectors {
				if v[0] != float32(len(texts[i])) {
					err = fmt.Errorf("vector %d of %q is another text's", i, texts)
				}
			}
		}
		results <- err
	}
	go embed([]string{"first"})
	if got := <-inner.started; len(got) != 1 {
		t.Fatalf("first call %q", got)
	}
	for c := range 5 {
		go embed([]string{strings.Repeat("a", c+1), strings.Repeat("b", c+10), strings.Repeat("c", c+20)})
	}
	for shared.queued() < 15 {
		runtime.Gosched()
	}
	close(inner.release)
	if got := <-inner.started; len(got) != 15 {
		t.Errorf("the waiting callers' next call sent %d texts, want all 15 of the 5 callers", len(got))
	}
	for range 6 {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
	select {
	case extra := <-inner.started:
		t.Errorf("a third call %q", extra)
	default:
	}
}

// A shared call goes on while one of its callers still waits, and stops
// once all of them gave up.
func TestSharedCallStopsWhenAllItsCallersGaveUp(t *testing.T) {
	inner := heldEmbedder{started: make(chan []string, 8), release: make(chan struct{})}
	shared := NewShared(inner, 1, 16)
	e := shared.Lane(Finishing)
	hold := make(chan error, 1)
	go func() { _, err := e.Embed(context.Background(), []string{"holds the call"}); hold <- err }()
	<-inner.started
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	errA, errB := make(chan error, 1), make(chan error, 1)
	go func() { _, err := e.Embed(ctxA, []string{"a"}); errA <- err }()
	go func() { _, err := e.Embed(ctxB, []string{"b"}); errB <- err }()
	for shared.queued() < 2 {
		runtime.Gosched()
	}
	inner.release <- struct{}{} // the first call returns
	if err := <-hold; err != nil {
		t.Fatal(err)
	}
	if got := <-inner.started; len(got) != 2 {
		t.Fatalf("shared call %q", got)
	}
	cancelA()
	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that gave up got %v", err)
	}
	inner.release <- struct{}{} // B still waits: the call was not stopped
	if err := <-errB; err != nil {
		t.Errorf("the caller that waited got %v", err)
	}

	ctxC, cancelC := context.WithCancel(context.Background())
	errC := make(chan error, 1)
	go func() { _, err := e.Embed(ctxC, []string{"c"}); errC <- err }()
	<-inner.started
	cancelC()
	if err := <-errC; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that gave up got %v", err)
	}
	for shared.busy() { // the call ends without a release
		runtime.Gosched()
	}
	cancelB()
}

// A failed call fails its caller, and the next call goes on.
func TestSharedFailedCallFailsItsCaller(t *testing.T) {
	e := NewShared(failOn("bad"), 1, 1).Lane(Finishing)
	if _, err := e.Embed(context.Background(), []string{"ok", "bad", "ok"}); err == nil {
		t.Error("the caller whose text failed was not told")
	}
	if vectors, err := e.Embed(context.Background(), []string{"ok", "ok"}); err != nil || len(vectors) != 2 {
		t.Errorf("the next caller got %d vectors, %v", len(vectors), err)
	}
}

type failOn string

func (f failOn) Embed(_ context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if t == string(f) {
			return nil, errors.New("embedder refused " + t)
		}
	}
	return make([][]float32, len(texts)), nil
}

// ask is a search's use of the Starting lane: its turn admitted, then
// its question embedded.
func ask(ctx context.Context, questions Embedder, texts []string) ([][]float32, error) {
	if err := questions.(Admitter).Admit(ctx); err != nil {
		return nil, err
	}
	return questions.Embed(ctx, texts)
}

// The check's texts go before new turns' admissions, even turns that
// waited longer, and turns are let in one at a time: under load an
// answer that has streamed gets its verdicts before new turns start.
func TestSharedServesTheCheckBeforeNewQuestions(t *testing.T) {
	inner := heldEmbedder{started: make(chan []string, 8), release: make(chan struct{})}
	shared := NewShared(inner, 1, 16)
	questions, check := shared.Lane(Starting), shared.Lane(Finishing)
	done := make(chan error, 8)
	embed := func(e Embedder, texts ...string) {
		go func() { _, err := e.Embed(context.Background(), texts); done <- err }()
	}
	question := func(text string) {
		go func() { _, err := ask(context.Background(), questions, []string{text}); done <- err }()
	}
	embed(check, "holds the call")
	<-inner.started
	question("first question")
	for shared.queued() < 1 {
		runtime.Gosched()
	}
	question("second question")
	for shared.queued() < 2 {
		runtime.Gosched()
	}
	embed(check, "sentence one", "sentence two")
	for shared.queued() < 4 {
		runtime.Gosched()
	}
	// The two turns are let in in order, but neither brings a check, so
	// the second may be let in before the first's question reaches the
	// queue: their questions come after the check, in either order.
	calls := inner.releaseAll(t, 4, done)
	var questionsAsked []string
	if len(calls) > 0 {
		questionsAsked = slices.Sorted(slices.Values(slices.Concat(calls[1:]...)))
	}
	if len(calls) == 0 || fmt.Sprint(calls[0]) != fmt.Sprint([]string{"sentence one", "sentence two"}) ||
		fmt.Sprint(questionsAsked) != fmt.Sprint([]string{"first question", "second question"}) {
		t.Errorf("calls after the first: %q, want the check's sentences, then the two questions", calls)
	}
}

// A turn let in has its question embedded before any check text that
// waits, however many do, in the first call to end: a busy check delays
// new turns' admissions, never the search of a turn admitted, which
// meets its embed deadline.
func TestSharedEmbedsAnAdmittedQuestionBeforeTheCheck(t *testing.T) {
	inner := heldEmbedder{started: make(chan []string, 8), release: make(chan struct{})}
	shared := NewShared(inner, 2, 4)
	questions, check := shared.Lane(Starting), shared.Lane(Finishing)
	if err := questions.(Admitter).Admit(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 8)
	for i := range 3 { // the check's work: two calls in flight, a batch waiting
		go func() {
			units := []string{fmt.Sprint("unit ", i, "a"), fmt.Sprint("unit ", i, "b"), fmt.Sprint("unit ", i, "c"), fmt.Sprint("unit ", i, "d")}
			_, err := check.Embed(context.Background(), units)
			done <- err
		}()
	}
	<-inner.started
	<-inner.started
	for shared.queued() < 4 {
		runtime.Gosched()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	asked := make(chan error, 1)
	go func() { _, err := questions.Embed(ctx, []string{"the question"}); asked <- err }()
	for shared.queued() < 5 {
		runtime.Gosched()
	}
	inner.release <- struct{}{}
	if got := <-inner.started; fmt.Sprint(got) != "[the question]" {
		t.Fatalf("the call after a check's: %q, want the question", got)
	}
	for range 3 { // the question's call, the other check call, the last batch's
		inner.release <- struct{}{}
	}
	if err := <-asked; err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// A turn that needs no embedding to start (its search came from the
// cache) is admitted like a question: after the check's waiting texts,
// and one at a time, each admission followed by the check's texts that
// come before the next.
func TestSharedAdmitsTurnsAfterTheCheck(t *testing.T) {
	inner := heldEmbedder{started: make(chan []string, 8), release: make(chan struct{})}
	shared := NewShared(inner, 1, 16)
	admitter := shared.Lane(Starting).(Admitter)
	check := shared.Lane(Finishing)
	checked := make(chan error, 4)
	embed := func(text string) {
		go func() { _, err := check.Embed(context.Background(), []string{text}); checked <- err }()
	}
	admitted := make(chan string, 2)
	admit := func(name string) {
		go func() {
			if err := admitter.Admit(context.Background()); err != nil {
				t.Error(err)
			}
			admitted <- name
		}()
	}
	slowly := func() { time.Sleep(200 * time.Millisecond); inner.release <- struct{}{} } // the embedder takes 200 ms a text

	embed("holds the call")
	<-inner.started
	admit("a")
	for shared.queued() < 1 {
		runtime.Gosched()
	}
	embed("a sentence that was waiting")
	for shared.queued() < 2 {
		runtime.Gosched()
	}
	admit("b")
	for shared.queued() < 3 {
		runtime.Gosched()
	}
	slowly()
	if got := <-inner.started; got[0] != "a sentence that was waiting" {
		t.Fatalf("after the first call: %q, want the waiting sentence before any admission", got)
	}
	slowly()
	if name := <-admitted; name != "a" {
		t.Fatalf("admitted %s first", name)
	}
	embed("a's sentence") // a's check, while the drain pauses
	if got := <-inner.started; got[0] != "a's sentence" {
		t.Fatalf("after a's admission: %q", got)
	}
	select {
	case name := <-admitted:
		t.Fatalf("%s admitted while a's check was embedding", name)
	default:
	}
	inner.release <- struct{}{}
	if name := <-admitted; name != "b" {
		t.Fatalf("admitted %s", name)
	}
	for range 3 {
		if err := <-checked; err != nil {
			t.Fatal(err)
		}
	}
}

// timedEmbedder computes one call at a time, perText a text, and records
// when each text's call started.
type timedEmbedder struct {
	perText time.Duration
	mu      sync.Mutex
	started map[string]time.Time
}

func (e *timedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range texts {
		e.started[t] = time.Now()
	}
	time.Sleep(time.Duration(len(texts)) * e.perText)
	return make([][]float32, len(texts)), nil
}

// Turns are let in no faster than the embedder serves the checks they
// bring: two questions asked together after turns whose answers each
// brought four sentences to check go four texts' time apart (started
// back to back, their answers would come back together and the last
// would wait for every verdict), while after turns whose checks brought
// nothing (their sentences were known) they go one after the other.
func TestSharedLetsTurnsInAsFastAsTheirChecksAreServed(t *testing.T) {
	const perText, sentences = 20 * time.Millisecond, 4
	for _, checked := range []bool{false, true} {
		inner := &timedEmbedder{perText: perText, started: map[string]time.Time{}}
		shared := NewShared(inner, 2, 16)
		questions, check := shared.Lane(Starting), shared.Lane(Finishing)
		ctx := context.Background()
		for turn := range 3 * checkSmoothing {
			if _, err := ask(ctx, questions, []string{fmt.Sprint("question ", turn)}); err != nil {
				t.Fatal(err)
			}
			if !checked {
				continue
			}
			answer := make([]string, sentences)
			for i := range answer {
				answer[i] = fmt.Sprintf("turn %d sentence %d", turn, i)
			}
			if _, err := check.Embed(ctx, answer); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for _, q := range []string{"a", "b"} {
			wg.Go(func() {
				if _, err := ask(ctx, questions, []string{q}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		gap := inner.started["b"].Sub(inner.started["a"]).Abs()
		if paced := gap >= (sentences-1)*perText; paced != checked {
			t.Errorf("checks of %d sentences a turn: %v: the questions asked together started %v apart", sentences, checked, gap)
		}
	}
}

// Work that outlives its caller (a cut check's units, whose vectors are
// kept) goes on, but once the caller stopped waiting it comes after new
// turns' questions, not before them.
func TestSharedServesAbandonedWorkAfterNewQuestions(t *testing.T) {
	inner := heldEmbedder{started: make(chan []string, 8), release: make(chan struct{})}
	shared := NewShared(inner, 1, 16)
	questions, check := shared.Lane(Starting), shared.Lane(Finishing)
	// The new turn is let in first: its question, not its admission, is
	// what the abandoned work must wait behind.
	if err := questions.(Admitter).Admit(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 3)
	go func() { _, err := check.Embed(context.Background(), []string{"holds the call"}); done <- err }()
	<-inner.started
	turn, stopWaiting := context.WithCancel(context.Background())
	fill, cancelFill := Outlive(turn, time.Minute)
	defer cancelFill()
	go func() { _, err := check.Embed(fill, []string{"a unit the cut check wanted"}); done <- err }()
	for shared.queued() < 1 {
		runtime.Gosched()
	}
	stopWaiting()
	go func() { _, err := questions.Embed(context.Background(), []string{"a new question"}); done <- err }()
	for shared.queued() < 2 {
		runtime.Gosched()
	}
	calls := inner.releaseAll(t, 3, done)
	if want := [][]string{{"a new question"}, {"a unit the cut check wanted"}}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls after the first: %q, want %q", calls, want)
	}
}

// Work that outlived its caller is dropped once its own deadline passed,
// even while new turns keep the embedder from ever reaching it: it
// holds its texts and no one will take its vectors.
func TestSharedForgetsAbandonedWorkPastItsDeadline(t *testing.T) {
	inner := heldEmbedder{started: make(chan []string, 8), release: make(chan struct{})}
	shared := NewShared(inner, 1, 16)
	questions, check := shared.Lane(Starting), shared.Lane(Finishing)
	done := make(chan error, 3)
	go func() { _, err := check.Embed(context.Background(), []string{"holds the call"}); done <- err }()
	<-inner.started
	turn, stopWaiting := context.WithCancel(context.Background())
	const cut = 50
	for i := range cut {
		fill, cancelFill := Outlive(turn, 10*time.Millisecond)
		defer cancelFill()
		go func() { _, _ = check.Embed(fill, []string{fmt.Sprint("a unit of cut check ", i)}) }()
	}
	for shared.queued() < cut {
		runtime.Gosched()
	}
	stopWaiting()
	time.Sleep(20 * time.Millisecond) // past every unit's deadline
	go func() { _, err := ask(context.Background(), questions, []string{"a new question"}); done <- err }()
	for shared.queued() < cut+1 {
		runtime.Gosched()
	}
	inner.release <- struct{}{}
	if got := <-inner.started; fmt.Sprint(got) != "[a new question]" {
		t.Fatalf("the call after the first embeds %q, want the new question", got)
	}
	if n := shared.queued(); n != 0 {
		t.Errorf("%d texts still queued past their deadline while a new turn is served, want 0", n)
	}
	inner.release <- struct{}{}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
