package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

// result is one system's phase.
type result struct {
	System string
	// Phase is "sequential" (one turn at a time, each question once) or
	// "<n> streams".
	Phase string
	summary
}

// warmUp asks a few questions untimed: connections, the system's own
// libraries.
func warmUp(ctx context.Context, sys *system, questions []string) {
	for _, q := range questions[:min(3, len(questions))] {
		if t := sys.client.ask(ctx, q); t.err != nil {
			log.Printf("%s: warm-up: %v", sys.name, t.err)
		}
	}
}

// measure runs the phases on one system, each between two readings of the
// processes' CPU and the embedder proxy's counts: the first pass asks each
// question once, as new (what a system keeps across turns is still
// empty: a route's fragment vectors, ragroute-cached's exact cache); then
// the same once more, one at a time, and many streams at once.
func measure(ctx context.Context, o options, sys *system, questions []string) []result {
	warmUp(ctx, sys, questions)
	phases := []struct {
		name string
		run  func() []turnTiming
	}{
		{"first pass", func() []turnTiming { return sequential(ctx, sys.client, questions) }},
		{"sequential", func() []turnTiming { return sequential(ctx, sys.client, questions) }},
		{fmt.Sprintf("%d streams", o.streams), func() []turnTiming { return concurrent(ctx, sys.client, questions, o.streams, o.duration) }},
	}
	var out []result
	for _, phase := range phases {
		pids := map[string]int{"system": sys.pid, "embedder": o.embedderPID, "milvus": o.milvusPID}
		before := map[string]time.Duration{}
		for name, pid := range pids {
			before[name] = testenv.TreeCPU(pid)
		}
		count := sys.proxy.count()
		start := time.Now()
		turns := phase.run()
		s := summarize(turns, time.Since(start))
		if strings.HasSuffix(phase.name, "streams") {
			s = summarize(turns, o.duration) // turns cut by the end are not counted, nor is their time
		}
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
	return out
}

const header = "%-18s %-11s %6s %5s %6s %8s %15s %15s %15s %24s %7s %12s\n"

func printHeader(w io.Writer) {
	fmt.Fprintf(w, header, "system", "phase", "turns", "err", "unchk", "turns/s", "TTFT p50/p95", "turn p50/p95", "trail p50/p95",
		"CPU ms/turn sys/emb/mil", "emb in", "RSS/peak MiB")
}

func printResult(w io.Writer, r result) {
	fmt.Fprintf(w, header, r.System, r.Phase, fmt.Sprint(r.Turns), fmt.Sprint(r.Errors), fmt.Sprint(r.Unchecked), fmt.Sprintf("%.1f", r.TurnsPerSecond),
		fmt.Sprintf("%.0f/%.0f ms", r.TTFTp50, r.TTFTp95), fmt.Sprintf("%.0f/%.0f ms", r.TurnP50, r.TurnP95),
		fmt.Sprintf("%.0f/%.0f ms", r.TrailP50, r.TrailP95),
		fmt.Sprintf("%.1f/%.1f/%.1f", r.CPUms["system"], r.CPUms["embedder"], r.CPUms["milvus"]),
		fmt.Sprintf("%.1f", r.EmbedderInputs), fmt.Sprintf("%.0f/%.0f", r.RSSMiB, r.PeakRSSMiB))
	if r.FirstError != "" {
		fmt.Fprintf(w, "  first error: %s\n", r.FirstError)
	}
}

// goal is one of docs/performance.md's goals, as measured: a ratio of
// two systems' figures, or one figure.
type goal struct {
	Goal     string  `json:"goal"`
	Value    float64 `json:"value"`
	Target   string  `json:"target"`
	Met      bool    `json:"met"`
	Measured bool    `json:"measured"`
}

// goals states the goals of docs/performance.md (issue 41's like-for-like
// ratios) from the systems measured; a goal whose systems did not run is
// left unmeasured.
func goals(results []result) []goal {
	find := func(system, phase string) *result {
		for i := range results {
			if results[i].System == system && (results[i].Phase == phase || (phase == "streams" && strings.HasSuffix(results[i].Phase, "streams"))) {
				return &results[i]
			}
		}
		return nil
	}
	var out []goal
	ratio := func(label string, a, b *result, value func(*result) float64, atLeast bool, target float64) {
		g := goal{Goal: label, Target: fmt.Sprintf("≤ %g×", target)}
		if atLeast {
			g.Target = fmt.Sprintf("≥ %g×", target)
		}
		if a != nil && b != nil && value(b) != 0 {
			g.Measured, g.Value = true, value(a)/value(b)
			g.Met = g.Value <= target
			if atLeast {
				g.Met = g.Value >= target
			}
		}
		out = append(out, g)
	}
	perSecond := func(r *result) float64 { return r.TurnsPerSecond }
	ttft := func(r *result) float64 { return r.TTFTp50 }
	ratio("uncached turns/s, streams: ragroute / LlamaIndex hybrid", find("ragroute", "streams"), find("llamaindex-hybrid", "streams"), perSecond, true, 3)
	ratio("uncached turns/s, streams: ragroute-dense / LlamaIndex dense", find("ragroute-dense", "streams"), find("llamaindex-dense", "streams"), perSecond, true, 1)
	ratio("TTFT p50, sequential: ragroute / LlamaIndex hybrid", find("ragroute", "sequential"), find("llamaindex-hybrid", "sequential"), ttft, false, 0.5)
	for _, system := range []string{"ragroute", "ragroute-cached"} {
		r := find(system, "streams")
		g := goal{Goal: system + ": turns the grounding check cut, streams (%)", Target: "≤ 1"}
		if r != nil && r.Turns > 0 {
			g.Measured, g.Value = true, 100*float64(r.Unchecked)/float64(r.Turns)
			g.Met = g.Value <= 1
		}
		out = append(out, g)
		g = goal{Goal: system + ": stream end after the last token, p95, streams (ms)", Target: "≤ 100"}
		if r != nil {
			g.Measured, g.Value, g.Met = true, r.TrailP95, r.TrailP95 <= 100
		}
		out = append(out, g)
	}
	return out
}

// printGoals prints the goals measured, and whether each is met.
func printGoals(w io.Writer, goals []goal) {
	fmt.Fprintln(w)
	for _, g := range goals {
		if !g.Measured {
			continue
		}
		verdict := "not met"
		if g.Met {
			verdict = "met"
		}
		fmt.Fprintf(w, "%-66s %8.2f   goal %-6s %s\n", g.Goal, g.Value, g.Target, verdict)
	}
}
