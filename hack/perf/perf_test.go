package main

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// The load's client reads an OpenAI stream as both systems send it: the
// first and last content deltas, the end, and errors in the stream.
func TestClientTimesAStreamedAnswer(t *testing.T) {
	model := httptest.NewServer(&scriptedModel{answer: "Lower waves go first. Then the next."})
	defer model.Close()
	c := client{http: model.Client(), url: model.URL}
	turn := c.ask(context.Background(), "How are sync waves ordered?")
	if turn.err != nil || turn.firstToken <= 0 || turn.lastToken < turn.firstToken || turn.done < turn.lastToken {
		t.Fatalf("turn %+v", turn)
	}
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"error\":{\"code\":\"timeout\"}}\n\n"))
	}))
	defer failing.Close()
	if turn := (client{http: failing.Client(), url: failing.URL}).ask(context.Background(), "q"); turn.err == nil {
		t.Error("an error in the stream was not a failed turn")
	}
	s := summarize([]turnTiming{turn, {err: os.ErrDeadlineExceeded}}, time.Second)
	if s.Turns != 1 || s.Errors != 1 || s.FirstError == "" || s.TurnsPerSecond != 1 || s.TTFTp50 <= 0 {
		t.Errorf("summary %+v", s)
	}
}

// The proxy counts one system's embedder inputs, a string or a list.
func TestCountingProxyCountsInputs(t *testing.T) {
	embedder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	defer embedder.Close()
	target, _ := url.Parse(embedder.URL)
	proxy := newCountingProxy(target)
	front := httptest.NewServer(proxy)
	defer front.Close()
	for _, body := range []string{`{"input":["a","bc"]}`, `{"input":"def"}`} {
		resp, err := http.Post(front.URL+"/v1/embeddings", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := proxy.count(); got != (embedderCount{requests: 2, inputs: 3, chars: 6}) {
		t.Errorf("counted %+v", got)
	}
}

// The goals are read from the systems measured, each against its own
// baseline; a goal whose systems did not run is not claimed either way.
func TestGoalsCompareLikeForLike(t *testing.T) {
	results := []result{
		{System: "llamaindex-hybrid", Phase: "64 streams", summary: summary{TurnsPerSecond: 4, Turns: 120}},
		{System: "llamaindex-hybrid", Phase: "sequential", summary: summary{TTFTp50: 100}},
		{System: "ragroute", Phase: "64 streams", summary: summary{TurnsPerSecond: 13, Turns: 390, Unchecked: 2, TrailP95: 150}},
		{System: "ragroute", Phase: "sequential", summary: summary{TTFTp50: 60}},
	}
	byGoal := map[string]goal{}
	for _, g := range goals(results) {
		byGoal[g.Goal] = g
	}
	check := func(name string, measured, met bool, value float64) {
		t.Helper()
		g, ok := byGoal[name]
		if !ok || g.Measured != measured || g.Met != met || (measured && math.Abs(g.Value-value) > 1e-9) {
			t.Errorf("%s: got %+v, want measured %v met %v value %g", name, g, measured, met, value)
		}
	}
	check("uncached turns/s, streams: ragroute / LlamaIndex hybrid", true, true, 13.0/4)
	check("TTFT p50, sequential: ragroute / LlamaIndex hybrid", true, false, 0.6)
	check("uncached turns/s, streams: ragroute-dense / LlamaIndex dense", false, false, 0)
	check("ragroute: turns the grounding check cut, streams (%)", true, true, 100*2.0/390)
	check("ragroute: stream end after the last token, p95, streams (ms)", true, false, 150)
}

// Varied, no two answers share a sentence and each keeps the script's
// sentences; otherwise every answer is the script.
func TestVariedAnswersNeverRepeat(t *testing.T) {
	m := &scriptedModel{answer: scriptedAnswer, varied: true}
	seen := map[string]bool{}
	for range 3 {
		sentences := strings.SplitAfter(m.answerNow(), ". ")
		if len(sentences) != 3 || !strings.HasSuffix(sentences[2], "sync-wave annotation.") {
			t.Fatalf("answer sentences %q", sentences)
		}
		for _, s := range sentences {
			if seen[s] {
				t.Errorf("sentence %q repeated", s)
			}
			seen[s] = true
		}
	}
	same := &scriptedModel{answer: scriptedAnswer}
	for range 2 {
		if got := same.answerNow(); got != scriptedAnswer {
			t.Errorf("the unvaried model answered %q", got)
		}
	}
}
