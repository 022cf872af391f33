package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
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

// The unseen pool asks each distinct section heading once, phrased by its
// shape, and the unanswerable questions; it skips front matter, code,
// generic and one-word headings and every question the first pass asks,
// and its order is the same every time.
func TestUnseenPoolTurnsHeadingsIntoNewQuestions(t *testing.T) {
	pages := []corpusPage{
		{Path: "user-guide/sync.md", Markdown: "---\ntitle: \"Sync Options\"\n---\n" +
			"# The H1 where front matter names the page\n\n## Overview\n\n## Prune\n\n## Enable [Server-Side Apply](https://example.com) {#ssa}\n\n" +
			"```yaml\n## Not A Heading\n```\n\n### Using `ApplyOutOfSyncOnly` ###\n\n## **Selective** Sync\n\n" +
			"## How do I skip dry run for new custom resources types?\n"},
		{Path: "operator-manual/notifications/overview.md", Markdown: "## Selective sync\n\n## 3. Webhook {{< tag >}} Payloads\n\n#### Too Deep For A Question\n"},
		{Path: "faq.md", Markdown: "# FAQ\n\n## Why is it stuck?\n"},
	}
	asked := []string{"How do I skip  dry run for new custom resources types?", "Is Nomad a target?"}
	unanswerable := []string{"Can Argo CD deploy to Nomad?", " is nomad a target?"}
	pool := unseenPool(pages, unanswerable, asked)
	want := []string{
		"How do I enable Server-Side Apply in Sync Options?",
		"How do I go about using ApplyOutOfSyncOnly in Sync Options?",
		"How does Selective Sync work in Sync Options?",
		"Can you explain Webhook Payloads, from notifications?", // phrasings take turns
		"FAQ: Why is it stuck?",
		"Can Argo CD deploy to Nomad?",
	}
	if got := slices.Sorted(slices.Values(pool.Questions)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("pool\n%q\nwant\n%q", got, want)
	}
	if pool.Size != 6 || pool.FromHeadings != 5 || pool.Unanswerable != 1 {
		t.Errorf("%d questions, from headings %d, unanswerable %d", pool.Size, pool.FromHeadings, pool.Unanswerable)
	}
	if again := unseenPool(pages, unanswerable, asked); !slices.Equal(again.Questions, pool.Questions) {
		t.Errorf("the order changed: %q, then %q", pool.Questions, again.Questions)
	}
}

// Headings lose their Markdown, not their identifiers.
func TestCleanHeadingKeepsNamesDropsMarkup(t *testing.T) {
	for in, want := range map[string]string{
		"[Traefik (v3.0)](https://docs.traefik.io/)":                                "Traefik (v3.0)",
		`<a name="x"></a>Why are resources of type ` + "`SealedSecret`" + ` stuck?`: "Why are resources of type SealedSecret stuck?",
		"Permissions for Kubernetes <1.31":                                          "Permissions for Kubernetes <1.31",
		"Removal of `argocd_app_sync_status` Metrics":                               "Removal of argocd_app_sync_status Metrics",
		"A) Use `kubectl edit` :warning: {: .note}":                                 "Use kubectl edit",
		"_Emphasized_ **bold** heading ##":                                          "Emphasized bold heading",
	} {
		if got := cleanHeading(in); got != want {
			t.Errorf("cleanHeading(%q) = %q, want %q", in, got, want)
		}
	}
}

// The streams of an unseen phase ask each question of the pool at most
// once, and the phase ends when the pool runs out, over the time until
// then.
func TestConcurrentFromPoolNeverRepeats(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	model := &scriptedModel{answer: "Lower waves go first."}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req chatRequest
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		asked[req.lastUser()]++
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		model.ServeHTTP(w, r)
	}))
	defer server.Close()
	questions := make([]string, 40)
	for i := range questions {
		questions[i] = "question " + strings.Repeat("x", i)
	}
	pool := newQuestionPool(questions)
	turns, wall, exhausted := concurrentFromPool(context.Background(), client{http: server.Client(), url: server.URL}, pool, 8, time.Minute)
	server.Close() // waits for the handlers of the turns cut
	if !exhausted || wall >= time.Minute || pool.left() != 0 {
		t.Errorf("exhausted %v after %s, %d left", exhausted, wall, pool.left())
	}
	// the turns still running when the pool ran out are cut, as at the end
	if len(turns) == 0 || len(turns) > len(questions) || len(asked) > len(questions) {
		t.Errorf("%d turns, %d questions asked, of %d", len(turns), len(asked), len(questions))
	}
	for q, n := range asked {
		if n != 1 {
			t.Errorf("%q asked %d times", q, n)
		}
	}
}

// The unseen phases' goals: the first pass's and the sequential unseen
// phase's against LlamaIndex hybrid, with no errors and few checks cut;
// the streams unseen phase's like the re-asked streams'.
func TestGoalsOfTheUnseenPhases(t *testing.T) {
	results := []result{
		{System: "llamaindex-hybrid", Phase: "first pass", summary: summary{TurnsPerSecond: 5, TTFTp95: 200, Turns: 72}},
		{System: "ragroute", Phase: "first pass", summary: summary{TurnsPerSecond: 4, TTFTp95: 250, Turns: 72, Unchecked: 1}},
		{System: "llamaindex-hybrid", Phase: "sequential unseen", summary: summary{TurnsPerSecond: 5, TTFTp95: 200, Turns: 72}},
		{System: "ragroute", Phase: "sequential unseen", summary: summary{TurnsPerSecond: 6, TTFTp95: 320, Turns: 71, Errors: 1}},
		{System: "llamaindex-hybrid", Phase: "64 streams unseen", summary: summary{TurnsPerSecond: 4, Turns: 120}},
		{System: "llamaindex-dense", Phase: "64 streams unseen", summary: summary{TurnsPerSecond: 20, Turns: 600}},
		{System: "ragroute", Phase: "64 streams unseen", summary: summary{TurnsPerSecond: 14, Turns: 420, Unchecked: 3}},
		{System: "ragroute-dense", Phase: "64 streams unseen", summary: summary{TurnsPerSecond: 21, Turns: 630}},
		// the re-asked phase does not stand in for the unseen one
		{System: "ragroute", Phase: "64 streams", summary: summary{TurnsPerSecond: 99, Turns: 2970}},
	}
	byGoal := map[string]goal{}
	for _, g := range goals(results) {
		byGoal[g.Goal] = g
	}
	check := func(name string, met bool, value float64) {
		t.Helper()
		g, ok := byGoal[name]
		if !ok || !g.Measured || g.Met != met || math.Abs(g.Value-value) > 1e-9 {
			t.Errorf("%s: got %+v, want met %v value %g", name, g, met, value)
		}
	}
	check("turns/s, first pass: ragroute / LlamaIndex hybrid", false, 0.8)
	check("TTFT p95, first pass: ragroute / LlamaIndex hybrid", true, 1.25)
	check("errors, first pass: every system", true, 0)
	check("ragroute: turns the grounding check cut, first pass (%)", false, 100.0/72)
	check("turns/s, sequential unseen: ragroute / LlamaIndex hybrid", true, 1.2)
	check("TTFT p95, sequential unseen: ragroute / LlamaIndex hybrid", false, 1.6)
	check("errors, sequential unseen: every system", false, 1)
	check("uncached turns/s, streams unseen: ragroute / LlamaIndex hybrid", true, 3.5)
	check("uncached turns/s, streams unseen: ragroute-dense / LlamaIndex dense", true, 1.05)
	check("errors, streams unseen: every system", true, 0)
	check("ragroute: turns the grounding check cut, streams unseen (%)", true, 100*3.0/420)
	if g := byGoal["uncached turns/s, streams: ragroute / LlamaIndex hybrid"]; g.Measured {
		t.Errorf("the re-asked streams goal was measured without LlamaIndex's re-asked phase: %+v", g)
	}
}
