package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
)

// countingProxy passes one system's embedding requests to the shared
// embedder and counts them: requests, inputs and their characters.
type countingProxy struct {
	next                    http.Handler
	requests, inputs, chars atomic.Int64
}

func newCountingProxy(target *url.URL) *countingProxy {
	proxy := httputil.NewSingleHostReverseProxy(target)
	// A turn cut at the end of a run cancels its request: not news.
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	return &countingProxy{next: proxy}
}

func (p *countingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Input json.RawMessage `json:"input"`
	}
	if json.Unmarshal(body, &req) == nil {
		var many []string
		var one string
		switch {
		case json.Unmarshal(req.Input, &many) == nil:
		case json.Unmarshal(req.Input, &one) == nil:
			many = []string{one}
		}
		p.requests.Add(1)
		p.inputs.Add(int64(len(many)))
		for _, s := range many {
			p.chars.Add(int64(len(s)))
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	p.next.ServeHTTP(w, r)
}

// embedderCount is what a proxy has counted so far.
type embedderCount struct{ requests, inputs, chars int64 }

func (p *countingProxy) count() embedderCount {
	return embedderCount{p.requests.Load(), p.inputs.Load(), p.chars.Load()}
}

func (c embedderCount) minus(o embedderCount) embedderCount {
	return embedderCount{c.requests - o.requests, c.inputs - o.inputs, c.chars - o.chars}
}
