package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"
)

// The load's client reads an OpenAI stream as both systems send it: the
// first and last content deltas, the end, and errors in the stream.
func TestClientTimesAStreamedAnswer(t *testing.T) {
	model := httptest.NewServer(scriptedModel{answer: "Lower waves go first. Then the next."})
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

// A process's CPU is read from /proc, its children's with it.
func TestTreeCPUReadsThisProcess(t *testing.T) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	if cpu := treeCPU(os.Getpid()); cpu < 10*time.Millisecond {
		t.Errorf("this process has used %s of CPU, want at least the 50 ms it just spun", cpu)
	}
	if rss, peak := memory(os.Getpid()); rss <= 0 || peak < rss {
		t.Errorf("RSS %.1f MiB, peak %.1f", rss, peak)
	}
}
