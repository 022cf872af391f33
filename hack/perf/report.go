package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"strings"
	"time"
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
			before[name] = treeCPU(pid)
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
				s.CPUms[name] = ms(treeCPU(pid)-before[name]) / float64(s.Turns)
			}
		}
		if s.Turns > 0 {
			s.EmbedderInputs = float64(embedded.inputs) / float64(s.Turns)
			s.EmbedderRequests = float64(embedded.requests) / float64(s.Turns)
		}
		s.RSSMiB, s.PeakRSSMiB = memory(sys.pid)
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

// printRatios states the goals of docs/performance.md as ratios of the
// systems measured.
func printRatios(w io.Writer, results []result) {
	find := func(system, phase string) *result {
		for i := range results {
			if results[i].System == system && (results[i].Phase == phase || (phase == "streams" && strings.HasSuffix(results[i].Phase, "streams"))) {
				return &results[i]
			}
		}
		return nil
	}
	ratio := func(label string, a, b *result, value func(*result) float64, goal string) {
		if a == nil || b == nil || value(b) == 0 {
			return
		}
		fmt.Fprintf(w, "%-58s %8.2f×   goal %s\n", label, value(a)/value(b), goal)
	}
	perSecond := func(r *result) float64 { return r.TurnsPerSecond }
	ttft := func(r *result) float64 { return r.TTFTp50 }
	embedderCPU := func(r *result) float64 { return r.CPUms["embedder"] }
	milvusCPU := func(r *result) float64 { return r.CPUms["milvus"] }
	fmt.Fprintln(w)
	ratio("uncached turns/s, streams: ragroute / LlamaIndex dense", find("ragroute", "streams"), find("llamaindex-dense", "streams"), perSecond, "≥ 1")
	ratio("cached turns/s, streams: ragroute / LlamaIndex dense", find("ragroute-cached", "streams"), find("llamaindex-dense", "streams"), perSecond, "≥ 10")
	ratio("TTFT p50, sequential: ragroute / LlamaIndex hybrid", find("ragroute", "sequential"), find("llamaindex-hybrid", "sequential"), ttft, "≤ 1")
	ratio("embedder CPU per uncached turn: ragroute / LlamaIndex dense", find("ragroute", "sequential"), find("llamaindex-dense", "sequential"), embedderCPU, "≤ 2")
	ratio("Milvus CPU per uncached turn: ragroute / LlamaIndex hybrid", find("ragroute", "sequential"), find("llamaindex-hybrid", "sequential"), milvusCPU, "≤ 3")
	if r := find("ragroute", "sequential"); r != nil {
		fmt.Fprintf(w, "%-58s %6.0f ms   goal ≤ 100 ms\n", "ragroute: stream end after the last token, p95, sequential", r.TrailP95)
	}
}
