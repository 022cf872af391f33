package scalecorpus

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// The goals of issue 41 for a corpus that grows to 10×.
const (
	goalSearchGrowth = 2.0  // search p50 at the largest multiple ≤ 2× that at 1×
	goalRSSGrowth    = 1.25 // ingestion peak RSS "flat": ≤ 1.25× that at 1×
	goalRateShare    = 0.9  // ingestion chunks/s ≥ 0.9× what the embedder alone serves
)

// searchKinds are the searches timed, in the table's order.
var searchKinds = []string{"dense", "bm25", "hybrid", "hybrid-acl"}

// report is what one run measured.
type report struct {
	Rows []row `json:"rows"`
	// Queries: searches timed per kind and size; RouteSearches: /v1/search
	// calls the route answered before its RSS was read.
	Queries       int `json:"queries"`
	RouteSearches int `json:"routeSearches"`
	// Real: ingestion through a real embedder, and that embedder alone,
	// served by one process and (when the run had a second) by two;
	// empty when the run had none.
	Real  []realFigures `json:"realEmbedder,omitempty"`
	Goals []goal        `json:"goals"`
	// Notes: rows left out and why.
	Notes []string `json:"notes,omitempty"`
	// LoadAverage is the 1-minute load when the run started and ended:
	// the machine is shared, so absolute times are inflated.
	LoadAverage [2]string `json:"loadAverage"`
}

// row is one corpus size.
type row struct {
	Corpus   string `json:"corpus"`
	Multiple int    `json:"multiple,omitempty"`
	Files    int    `json:"files"`
	Chunks   int    `json:"chunks"`
	// Ingest is `ragroute ingest` with the hashing embedder at the
	// default concurrency; at 1× Ingests adds the other runs (concurrency
	// 1, a real embedder).
	Ingest  ingestFigures   `json:"ingest"`
	Ingests []ingestFigures `json:"moreIngests,omitempty"`
	// EmbedderAlone (1× only): the embedder's own rate, the corpus' chunks
	// sent as ingestion sends them (batch size, concurrency).
	EmbedderAlone []embedderRate `json:"embedderAlone,omitempty"`
	// MilvusRSSMiB is Milvus Lite's RSS once the corpus is ingested and
	// searched.
	MilvusRSSMiB float64                  `json:"milvusRSSMiB"`
	Search       map[string]searchFigures `json:"search"`
	Route        routeFigures             `json:"route"`
}

type ingestFigures struct {
	Embedder    string  `json:"embedder"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	// ChunksPerSecond: chunks written / wall time of the whole run
	// (reading, chunking, embedding, writing, the background measure).
	ChunksPerSecond float64 `json:"chunksPerSecond"`
	// PeakRSSMiB: the ingest process' maximum resident set (getrusage).
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// MilvusCPUSeconds: what Milvus Lite spent while it ran.
	MilvusCPUSeconds float64 `json:"milvusCPUSeconds"`
}

type searchFigures struct {
	P50ms float64 `json:"p50ms"`
	P95ms float64 `json:"p95ms"`
	// MilvusCPUms: Milvus Lite's CPU per search (its process tree).
	MilvusCPUms float64 `json:"milvusCPUms"`
	// Hits: mean fused hits per search.
	Hits float64 `json:"hits"`
}

type routeFigures struct {
	RSSMiB     float64 `json:"rssMiB"`
	PeakRSSMiB float64 `json:"peakRSSMiB"`
}

// realFigures: a part of the Argo CD corpus ingested through a real
// embedder at concurrency 1 and 2, and the embedder alone on its chunks.
type realFigures struct {
	Corpus string `json:"corpus"`
	// Processes: how many processes of the embedder served the calls, in
	// turn.
	Processes int             `json:"processes"`
	Files     int             `json:"files"`
	Chunks    int             `json:"chunks"`
	Ingests   []ingestFigures `json:"ingests"`
	Alone     []embedderRate  `json:"alone"`
}

type embedderRate struct {
	Embedder        string  `json:"embedder"`
	Concurrency     int     `json:"concurrency"`
	ChunksPerSecond float64 `json:"chunksPerSecond"`
}

// goal is one goal as measured: Met is nil when the run lacks what it
// compares (e.g. no 1× row).
type goal struct {
	Goal     string  `json:"goal"`
	Measured float64 `json:"measured"`
	Target   float64 `json:"target"`
	// AtMost: the goal is measured ≤ target (else ≥).
	AtMost bool   `json:"atMost"`
	Met    *bool  `json:"met"`
	Detail string `json:"detail"`
}

// goals compares the largest Argo CD multiple with 1×, and each ingestion
// at 1× with its embedder alone at the same concurrency.
func (r *report) goals() []goal {
	var one, largest *row
	for i := range r.Rows {
		switch m := r.Rows[i].Multiple; {
		case m == 1:
			one = &r.Rows[i]
		case m > 1 && (largest == nil || m > largest.Multiple):
			largest = &r.Rows[i]
		}
	}
	var out []goal
	if one != nil && largest != nil {
		for _, kind := range searchKinds {
			a, b := one.Search[kind].P50ms, largest.Search[kind].P50ms
			out = append(out, ratioGoal(fmt.Sprintf("%s search p50 at %d× / 1×", kind, largest.Multiple), b, a, goalSearchGrowth, true,
				fmt.Sprintf("%.1f ms / %.1f ms; Milvus CPU per search %.1f / %.1f ms", b, a, largest.Search[kind].MilvusCPUms, one.Search[kind].MilvusCPUms)))
		}
		// On a shared machine a search's wall time is mostly its wait for
		// a core; the CPU Milvus spends on it is not, and bounds the wall
		// time on a quiet one.
		a, b := one.Search["hybrid-acl"].MilvusCPUms, largest.Search["hybrid-acl"].MilvusCPUms
		out = append(out, ratioGoal(fmt.Sprintf("hybrid-acl Milvus CPU per search at %d× / 1× (load-independent)", largest.Multiple), b, a, goalSearchGrowth, true,
			fmt.Sprintf("%.1f ms / %.1f ms", b, a)))
		out = append(out, ratioGoal(fmt.Sprintf("ingestion peak RSS at %d× / 1×", largest.Multiple), largest.Ingest.PeakRSSMiB, one.Ingest.PeakRSSMiB, goalRSSGrowth, true,
			fmt.Sprintf("%.0f MiB / %.0f MiB", largest.Ingest.PeakRSSMiB, one.Ingest.PeakRSSMiB)))
	}
	if one != nil {
		out = append(out, rateGoals(append([]ingestFigures{one.Ingest}, one.Ingests...), one.EmbedderAlone, "")...)
	}
	for _, rf := range r.Real {
		out = append(out, rateGoals(rf.Ingests, rf.Alone, ", "+processes(rf.Processes))...)
	}
	return out
}

// rateGoals compares each ingestion with its embedder alone at the same
// concurrency; served says how the embedder was served, for the goal's
// name.
func rateGoals(ingests []ingestFigures, alone []embedderRate, served string) []goal {
	var out []goal
	for _, in := range ingests {
		for _, a := range alone {
			if a.Embedder == in.Embedder && a.Concurrency == in.Concurrency {
				out = append(out, ratioGoal(fmt.Sprintf("ingestion rate / embedder alone (%s, concurrency %d%s)", in.Embedder, in.Concurrency, served),
					in.ChunksPerSecond, a.ChunksPerSecond, goalRateShare, false,
					fmt.Sprintf("%.0f / %.0f chunks/s", in.ChunksPerSecond, a.ChunksPerSecond)))
			}
		}
	}
	return out
}

// processes names how many processes of an embedder served a run.
func processes(n int) string {
	if n == 1 {
		return "1 embedder process"
	}
	return fmt.Sprintf("%d embedder processes", n)
}

// ratioGoal is num/den against target: at most it when atMost, else at
// least it.
func ratioGoal(name string, num, den, target float64, atMost bool, detail string) goal {
	g := goal{Goal: name, Target: target, AtMost: atMost, Detail: detail}
	if den > 0 {
		g.Measured = num / den
		met := g.Measured >= target
		if atMost {
			met = g.Measured <= target
		}
		g.Met = &met
	}
	return g
}

// print writes the tables and the goals.
func (r *report) print(w io.Writer) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "corpus\tfiles\tchunks\tingest s\tchunks/s\tingest peak RSS\tingest CPU s\tMilvus CPU s\tMilvus RSS\troute RSS (peak)\n")
	for _, row := range r.Rows {
		in := row.Ingest
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.0f\t%.0f MiB\t%.1f\t%.1f\t%.0f MiB\t%.0f MiB (%.0f)\n", row.Corpus, row.Files, row.Chunks,
			in.Seconds, in.ChunksPerSecond, in.PeakRSSMiB, in.CPUSeconds, in.MilvusCPUSeconds, row.MilvusRSSMiB, row.Route.RSSMiB, row.Route.PeakRSSMiB)
		for _, more := range row.Ingests {
			fmt.Fprintf(tw, "  ingest: %s, concurrency %d\t\t\t%.1f\t%.0f\t%.0f MiB\t%.1f\t%.1f\t\t\n", more.Embedder, more.Concurrency,
				more.Seconds, more.ChunksPerSecond, more.PeakRSSMiB, more.CPUSeconds, more.MilvusCPUSeconds)
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "\nsearch, one at a time, %d queries per kind: p50 / p95 ms, Milvus CPU ms per search\n", r.Queries)
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "corpus\tchunks\t%s\n", strings.Join(searchKinds, "\t"))
	for _, row := range r.Rows {
		cells := []string{row.Corpus, fmt.Sprint(row.Chunks)}
		for _, kind := range searchKinds {
			s := row.Search[kind]
			cells = append(cells, fmt.Sprintf("%.1f / %.1f, cpu %.1f", s.P50ms, s.P95ms, s.MilvusCPUms))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
	for _, row := range r.Rows {
		if len(row.EmbedderAlone) > 0 {
			fmt.Fprintf(&b, "\nthe hashing embedder alone, %s:", row.Corpus)
			for _, e := range row.EmbedderAlone {
				fmt.Fprintf(&b, " concurrency %d: %.0f chunks/s;", e.Concurrency, e.ChunksPerSecond)
			}
			b.WriteString("\n")
		}
	}
	for _, rf := range r.Real {
		fmt.Fprintf(&b, "\nreal embedder, %s, %s (%d files, %d chunks):", processes(rf.Processes), rf.Corpus, rf.Files, rf.Chunks)
		for _, in := range rf.Ingests {
			fmt.Fprintf(&b, " ingest at concurrency %d: %.0f chunks/s, %.1f s, peak RSS %.0f MiB;", in.Concurrency, in.ChunksPerSecond, in.Seconds, in.PeakRSSMiB)
		}
		for _, e := range rf.Alone {
			fmt.Fprintf(&b, " alone at concurrency %d: %.0f chunks/s;", e.Concurrency, e.ChunksPerSecond)
		}
		b.WriteString("\n")
	}
	b.WriteString("\ngoals\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, g := range r.Goals {
		verdict := "not measured"
		if g.Met != nil {
			verdict = map[bool]string{true: "met", false: "MISSED"}[*g.Met]
		}
		bound := "≥"
		if g.AtMost {
			bound = "≤"
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s %.2f: %s\t%s\n", g.Goal, g.Measured, bound, g.Target, verdict, g.Detail)
	}
	_ = tw.Flush()
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "1-minute load average %s at start, %s at end (a shared machine: ratios matter, not absolute times)\n", r.LoadAverage[0], r.LoadAverage[1])
	_, _ = io.WriteString(w, b.String())
}

func (r *report) writeJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// loadAverage is the 1-minute load average.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Fields(string(data))[0]
}
