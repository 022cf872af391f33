package main

import (
	"fmt"
	"io"
	"strings"
)

// result is one system's phase.
type result struct {
	System string
	// Phase is one of phases.go's: "first pass", "sequential", "<n>
	// streams", "sequential unseen" or "<n> streams unseen".
	Phase string
	summary
}

const header = "%-18s %-17s %6s %5s %6s %8s %15s %15s %15s %24s %7s %12s\n"

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
// left unmeasured. The re-asked phases' goals come first, then those of
// the phases whose questions a route's check had not seen: the first pass,
// the sequential unseen phase (the same goals, on a system past its first
// turns) and the streams unseen phase.
func goals(results []result) []goal {
	m := measuredGoals{results: results}
	perSecond := func(r *result) float64 { return r.TurnsPerSecond }
	ttft50 := func(r *result) float64 { return r.TTFTp50 }
	ttft95 := func(r *result) float64 { return r.TTFTp95 }
	m.ratio("uncached turns/s, streams: ragroute / LlamaIndex hybrid", "streams", "ragroute", "llamaindex-hybrid", perSecond, true, 3)
	m.ratio("uncached turns/s, streams: ragroute-dense / LlamaIndex dense", "streams", "ragroute-dense", "llamaindex-dense", perSecond, true, 1)
	m.ratio("TTFT p50, sequential: ragroute / LlamaIndex hybrid", "sequential", "ragroute", "llamaindex-hybrid", ttft50, false, 0.5)
	for _, system := range []string{"ragroute", "ragroute-cached"} {
		m.checksCut(system, "streams")
		g := goal{Goal: system + ": stream end after the last token, p95, streams (ms)", Target: "≤ 100"}
		if r := m.find(system, "streams"); r != nil {
			g.Measured, g.Value, g.Met = true, r.TrailP95, r.TrailP95 <= 100
		}
		m.out = append(m.out, g)
	}
	for _, phase := range []string{"first pass", "sequential unseen"} {
		m.ratio("turns/s, "+phase+": ragroute / LlamaIndex hybrid", phase, "ragroute", "llamaindex-hybrid", perSecond, true, 1)
		m.ratio("TTFT p95, "+phase+": ragroute / LlamaIndex hybrid", phase, "ragroute", "llamaindex-hybrid", ttft95, false, 1.5)
		m.noErrors(phase)
		m.checksCut("ragroute", phase)
	}
	m.ratio("uncached turns/s, streams unseen: ragroute / LlamaIndex hybrid", "streams unseen", "ragroute", "llamaindex-hybrid", perSecond, true, 3)
	m.ratio("uncached turns/s, streams unseen: ragroute-dense / LlamaIndex dense", "streams unseen", "ragroute-dense", "llamaindex-dense", perSecond, true, 1)
	m.noErrors("streams unseen")
	m.checksCut("ragroute", "streams unseen")
	return m.out
}

// measuredGoals collects goals from one run's results.
type measuredGoals struct {
	results []result
	out     []goal
}

// find is a system's phase; "streams" and "streams unseen" stand for the
// phases of any number of streams.
func (m *measuredGoals) find(system, phase string) *result {
	for i := range m.results {
		if m.results[i].System == system && phaseIs(m.results[i].Phase, phase) {
			return &m.results[i]
		}
	}
	return nil
}

func phaseIs(name, phase string) bool {
	if phase == "streams" || phase == "streams unseen" {
		return strings.HasSuffix(name, " "+phase)
	}
	return name == phase
}

// ratio states system a's value over system b's, at least or at most target.
func (m *measuredGoals) ratio(label, phase, a, b string, value func(*result) float64, atLeast bool, target float64) {
	g := goal{Goal: label, Target: fmt.Sprintf("≤ %g×", target)}
	if atLeast {
		g.Target = fmt.Sprintf("≥ %g×", target)
	}
	ra, rb := m.find(a, phase), m.find(b, phase)
	if ra != nil && rb != nil && value(rb) != 0 {
		g.Measured, g.Value = true, value(ra)/value(rb)
		g.Met = g.Value <= target
		if atLeast {
			g.Met = g.Value >= target
		}
	}
	m.out = append(m.out, g)
}

// checksCut states the share of a system's turns whose grounding check was
// cut (grounding_unchecked), at most 1 %.
func (m *measuredGoals) checksCut(system, phase string) {
	g := goal{Goal: fmt.Sprintf("%s: turns the grounding check cut, %s (%%)", system, phase), Target: "≤ 1"}
	if r := m.find(system, phase); r != nil && r.Turns > 0 {
		g.Measured, g.Value = true, 100*float64(r.Unchecked)/float64(r.Turns)
		g.Met = g.Value <= 1
	}
	m.out = append(m.out, g)
}

// noErrors states the failed turns of every system in a phase: none, or
// its ratios compare systems that did not all answer.
func (m *measuredGoals) noErrors(phase string) {
	g := goal{Goal: "errors, " + phase + ": every system", Target: "= 0"}
	for _, r := range m.results {
		if phaseIs(r.Phase, phase) {
			g.Measured = true
			g.Value += float64(r.Errors)
		}
	}
	g.Met = g.Measured && g.Value == 0
	m.out = append(m.out, g)
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
		fmt.Fprintf(w, "%-70s %8.2f   goal %-6s %s\n", g.Goal, g.Value, g.Target, verdict)
	}
}
