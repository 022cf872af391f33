package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

// phase is one timed stretch of load on a system: run returns the turns
// that finished and the time they are counted over.
type phase struct {
	name string
	run  func() ([]turnTiming, time.Duration)
	// settleFirst: wait for the work the previous phase left running.
	settleFirst bool
}

// timed counts a phase's turns over the time it took.
func timed(run func() []turnTiming) func() ([]turnTiming, time.Duration) {
	return func() ([]turnTiming, time.Duration) {
		start := time.Now()
		turns := run()
		return turns, time.Since(start)
	}
}

// measure runs the phases on one system, each between two readings of the
// processes' CPU and the embedder proxy's counts: the first pass asks each
// question once, as new (what a system keeps across turns is still
// empty: a route's fragment vectors, ragroute-cached's exact cache); then
// the same once more, one at a time, and many streams at once. With
// o.unseen, two phases follow that ask the unseen pool's questions, each
// once (unseen.go): as many as the first pass one at a time, then many
// streams at once until the duration ends or the pool runs out. Every
// system is asked the pool in the same order.
func measure(ctx context.Context, o options, sys *system, questions, unseen []string) []result {
	pool := newQuestionPool(unseen)
	warmUp(ctx, sys, warmUpQuestions(pool, questions))
	phases := []phase{
		{name: "first pass", run: timed(func() []turnTiming { return sequential(ctx, sys.client, questions) })},
		{name: "sequential", run: timed(func() []turnTiming { return sequential(ctx, sys.client, questions) })},
		{name: fmt.Sprintf("%d streams", o.streams), run: func() ([]turnTiming, time.Duration) {
			return concurrent(ctx, sys.client, questions, o.streams, o.duration), o.duration // turns cut by the end are not counted, nor is their time
		}},
	}
	if o.unseen {
		phases = append(phases,
			phase{name: "sequential unseen", settleFirst: true, run: timed(func() []turnTiming {
				return sequentialFromPool(ctx, sys.client, pool, len(questions))
			})},
			phase{name: fmt.Sprintf("%d streams unseen", o.streams), run: func() ([]turnTiming, time.Duration) {
				turns, wall, exhausted := concurrentFromPool(ctx, sys.client, pool, o.streams, o.duration)
				if exhausted {
					log.Printf("%s: the unseen questions ran out after %s (%d turns): the phase ended there, over that time", sys.name, wall.Round(time.Millisecond), len(turns))
				}
				return turns, wall
			}},
		)
	}
	pids := map[string]int{"system": sys.pid, "embedder": o.embedderPID, "milvus": o.milvusPID}
	var out []result
	for _, phase := range phases {
		if phase.settleFirst {
			settle(ctx, sys.name, pids)
		}
		before := map[string]time.Duration{}
		for name, pid := range pids {
			before[name] = testenv.TreeCPU(pid)
		}
		count := sys.proxy.count()
		turns, wall := phase.run()
		s := summarize(turns, wall)
		embedded := sys.proxy.count().minus(count)
		s.CPUms = map[string]float64{}
		for name, pid := range pids {
			if pid > 0 && s.Turns > 0 {
				s.CPUms[name] = ms(testenv.TreeCPU(pid)-before[name]) / float64(s.Turns)
			}
		}
		if s.Turns > 0 {
			s.EmbedderInputs = float64(embedded.inputs) / float64(s.Turns)
			s.EmbedderRequests = float64(embedded.requests) / float64(s.Turns)
		}
		s.RSSMiB, s.PeakRSSMiB = testenv.Memory(sys.pid)
		out = append(out, result{System: sys.name, Phase: phase.name, summary: s})
	}
	if o.unseen {
		log.Printf("%s: %d of %d unseen questions left unasked", sys.name, pool.left(), len(unseen))
	}
	return out
}

// warmUpQuestions are three of the unseen pool's questions, which no phase
// asks again, so that the first pass's fragments are new to a route's
// check; the first pass's own where the pool is empty.
func warmUpQuestions(pool *questionPool, questions []string) []string {
	var warm []string
	for range 3 {
		q, ok := pool.take()
		if !ok {
			return questions[:min(3, len(questions))]
		}
		warm = append(warm, q)
	}
	return warm
}

// warmUp asks a few questions untimed: connections, the system's own
// libraries.
func warmUp(ctx context.Context, sys *system, questions []string) {
	for _, q := range questions {
		if t := sys.client.ask(ctx, q); t.err != nil {
			log.Printf("%s: warm-up: %v", sys.name, t.err)
		}
	}
}

// settle waits, at most 10 s, until the processes measured use under a
// quarter of a core over half a second: the turns a streams phase cut at
// its end, and what a system still does for them (LlamaIndex finishes a
// query whose client left), would otherwise be counted in the next phase.
func settle(ctx context.Context, system string, pids map[string]int) {
	const window, limit = 500 * time.Millisecond, 10 * time.Second
	used := func() time.Duration {
		var total time.Duration
		for _, pid := range pids {
			total += testenv.TreeCPU(pid)
		}
		return total
	}
	last := used()
	for waited := time.Duration(0); waited < limit; waited += window {
		select {
		case <-ctx.Done():
			return
		case <-time.After(window):
		}
		now := used()
		if now-last < window/4 {
			return
		}
		last = now
	}
	log.Printf("%s: still busy %s after the streams phase; measuring on", system, limit)
}
