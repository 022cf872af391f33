// Command perf is `make compare-perf`: the same load against `ragroute
// serve` and LlamaIndex's streaming query engine (dense and hybrid), on
// the same embedder, Milvus Lite and instant scripted chat model, asked
// through each one's OpenAI-compatible streaming endpoint, one turn at a
// time and with many streams at once: the dev questions, new and then
// re-asked, then questions no phase asked before (unseen.go). It prints,
// per system and phase, the time to the first token, the turn's duration
// and how long the stream's end trails its last token, turns per second,
// errors, the CPU per turn of the system's process, the embedder's and
// Milvus', the embedder inputs per turn and the system's memory, then the
// ratios the performance goals are stated in (docs/performance.md).
//
// hack/compare-perf.sh starts the embedder and Milvus Lite and passes
// their addresses and PIDs; this program starts everything else (the
// scripted model and a counting proxy per system in-process, `ragroute
// ingest` and two `ragroute serve`, one without its exact cache, and one
// LlamaIndex server per configuration) and stops what it started by PID.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

type options struct {
	ragroute, python, llamaScript string
	route, corpus, questionsFile  string
	unanswerableFile              string
	milvusURI                     string
	milvusPID                     int
	embedderURL, embedderModel    string
	embedderPID                   int
	dims, maxInputTokens          int
	streams                       int
	duration                      time.Duration
	systems                       string
	jsonOut, dataDir              string
	topK                          int
	variedAnswers                 bool
	unseen                        bool
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("compare-perf: ")
	var o options
	flag.StringVar(&o.ragroute, "ragroute", "", "the ragroute binary")
	flag.StringVar(&o.python, "python", "", "the Python of the LlamaIndex virtualenv")
	flag.StringVar(&o.llamaScript, "llamaindex-server", "hack/compare/llamaindex_serve.py", "LlamaIndex's server script")
	flag.StringVar(&o.route, "route", "hack/perf/route.yaml", "the route's manifests (QueryRoute, KnowledgeStore, PlatformPrompt)")
	flag.StringVar(&o.corpus, "corpus", "test/eval/corpus/argocd", "the Markdown corpus")
	flag.StringVar(&o.questionsFile, "questions", "test/eval/dev.jsonl", "the questions (JSONL, field question)")
	flag.StringVar(&o.unanswerableFile, "unanswerable", "test/eval/dev-unanswerable.jsonl", "unanswerable questions for the unseen phases (JSONL, field question); none when empty")
	flag.BoolVar(&o.unseen, "unseen", true, "after the re-asked phases, ask questions no phase asked before (the corpus' headings as questions, and the unanswerable ones), one at a time and with many streams")
	flag.StringVar(&o.milvusURI, "milvus-uri", "", "Milvus Lite's address, http://127.0.0.1:port")
	flag.IntVar(&o.milvusPID, "milvus-pid", 0, "Milvus Lite's PID, for its CPU")
	flag.StringVar(&o.embedderURL, "embedding-base-url", "", "the embedder's OpenAI-compatible base URL (…/v1)")
	flag.StringVar(&o.embedderModel, "embedding-model", "all-MiniLM-L6-v2", "the embedder's model name")
	flag.IntVar(&o.embedderPID, "embedder-pid", 0, "the embedder's PID, for its CPU")
	flag.IntVar(&o.dims, "dimensions", 384, "the embedder's dimensions")
	flag.IntVar(&o.maxInputTokens, "max-input-tokens", 256, "the embedder's input limit, as both systems cut inputs")
	flag.IntVar(&o.streams, "streams", 64, "concurrent streams of the concurrent phases")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "length of each concurrent phase")
	flag.StringVar(&o.systems, "systems", "llamaindex-dense,llamaindex-hybrid,ragroute,ragroute-dense,ragroute-cached", "the systems to measure, in order")
	flag.StringVar(&o.jsonOut, "json", "", "write the results as JSON to this file")
	flag.StringVar(&o.dataDir, "data", "", "scratch folder (configs, logs); a temporary one when empty")
	flag.IntVar(&o.topK, "top-k", 6, "LlamaIndex's similarity_top_k: the route's maxFragments, so both answer from as many fragments")
	flag.BoolVar(&o.variedAnswers, "varied-answers", false, "number every answer's sentences with the model call, so that no answer repeats (the grounding check's sentence cache then holds nothing)")
	flag.Parse()
	if o.ragroute == "" || o.milvusURI == "" || o.embedderURL == "" {
		log.Fatal("-ragroute, -milvus-uri and -embedding-base-url are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Fatal(err)
	}
}

// the answer every turn streams: three sentences, as a short grounded
// answer has, for the grounding check to judge.
const scriptedAnswer = "Argo CD applies the resources of an application in sync waves. " +
	"Lower waves are applied first, and a wave starts only when the previous one is healthy. " +
	"Set the wave of a resource with the argocd.argoproj.io/sync-wave annotation."

func run(ctx context.Context, o options) error {
	if o.dataDir == "" {
		dir, err := os.MkdirTemp("", "compare-perf-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.dataDir = dir
	}
	questions, err := loadQuestions(o.questionsFile)
	if err != nil {
		return err
	}
	unseen, err := loadUnseen(o, questions)
	if err != nil {
		return err
	}
	embedder, err := url.Parse(strings.TrimSuffix(o.embedderURL, "/v1"))
	if err != nil {
		return fmt.Errorf("embedding base URL: %w", err)
	}
	procs := &processes{}
	defer procs.stopAll()
	model, err := serveLocal(&scriptedModel{answer: scriptedAnswer, varied: o.variedAnswers})
	if err != nil {
		return err
	}
	systems := strings.Split(o.systems, ",")
	if slices.ContainsFunc(systems, func(name string) bool { return strings.HasPrefix(name, "ragroute") }) {
		if err := ingest(ctx, o, procs); err != nil { // the ragroute systems serve one collection
			return err
		}
	}
	printHeader(os.Stdout)
	var results []result
	for _, name := range systems {
		proxy := newCountingProxy(embedder)
		proxyURL, err := serveLocal(proxy)
		if err != nil {
			return err
		}
		sys, err := startSystem(ctx, o, procs, name, model+"/v1", proxyURL+"/v1")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		sys.proxy = proxy
		log.Printf("%s: measuring (%d questions one at a time, twice, then %d streams for %s%s)", name, len(questions), o.streams, o.duration, unseenPlan(o, len(questions)))
		for _, r := range measure(ctx, o, sys, questions, unseen.Questions) {
			results = append(results, r)
			printResult(os.Stdout, r)
		}
		procs.stop(sys.pid) // an idle system still costs memory and a core's scheduling
	}
	measured := goals(results)
	printGoals(os.Stdout, measured)
	if o.jsonOut != "" {
		report := struct {
			Results []result         `json:"results"`
			Goals   []goal           `json:"goals"`
			Unseen  *unseenQuestions `json:"unseen,omitempty"` // the pool the unseen phases drew from
		}{Results: results, Goals: measured}
		if o.unseen {
			report.Unseen = &unseen
		}
		data, _ := json.MarshalIndent(report, "", "  ")
		if err := os.WriteFile(o.jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// serveLocal serves h on a free loopback port for as long as this process
// runs, and returns its address.
func serveLocal(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() { _ = http.Serve(ln, h) }()
	return "http://" + ln.Addr().String(), nil
}

// loadUnseen makes the unseen phases' pool (unseen.go) from o's corpus and
// unanswerable questions, less the first pass's. It is made even with
// o.unseen off: the warm-up asks three of its questions.
func loadUnseen(o options, firstPass []string) (unseenQuestions, error) {
	pages, err := readCorpus(o.corpus)
	if err != nil {
		return unseenQuestions{}, fmt.Errorf("unseen questions: %w", err)
	}
	var unanswerable []string
	if o.unanswerableFile != "" {
		if unanswerable, err = loadQuestions(o.unanswerableFile); err != nil {
			return unseenQuestions{}, fmt.Errorf("unseen questions: %w", err)
		}
	}
	pool := unseenPool(pages, unanswerable, firstPass)
	log.Printf("unseen questions: %d (%d from the corpus' headings, %d unanswerable), in a fixed order", len(pool.Questions), pool.FromHeadings, pool.Unanswerable)
	return pool, nil
}

// unseenPlan says what the unseen phases will ask, for the log.
func unseenPlan(o options, firstPass int) string {
	if !o.unseen {
		return ""
	}
	return fmt.Sprintf("; then unseen questions: %d one at a time, then %d streams for %s", firstPass, o.streams, o.duration)
}

// loadQuestions reads the question texts of a JSONL question set.
func loadQuestions(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var q struct {
			Question string `json:"question"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil || q.Question == "" {
			return nil, fmt.Errorf("questions %s: a line without a question: %q", path, line)
		}
		out = append(out, q.Question)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("questions %s: none", path)
	}
	return out, nil
}
